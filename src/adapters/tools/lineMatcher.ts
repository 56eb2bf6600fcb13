/**
 * The line matcher of `grep`: the model's pattern compiled by RE2JS (a pure-JS port of RE2), which
 * matches in time linear in the line, whatever the pattern. JavaScript's own `RegExp` backtracks:
 * `^(a+)+$` over 30 `a`s and a `!` runs for minutes on the one thread every session shares, and no
 * timeout or cancel can interrupt a synchronous `RegExp.test`.
 *
 * The syntax is RE2's (https://github.com/google/re2/wiki/Syntax): no backreferences and no
 * lookaround; a pattern RE2 rejects, or one too large to compile, is `INVALID_ARGS` with RE2's reason.
 */
import { RE2JS } from 're2js';
import { ErrorCode } from '../../protocol/index.js';
import { ToolError } from '../../runtime/toolError.js';

/** Longest pattern accepted, in UTF-16 units; RE2 also bounds the compiled program's size. */
export const MAX_PATTERN_CHARS = 4096;

export interface LineMatcher {
  /** True when the pattern matches somewhere in `line` (a line without its newline). */
  test(line: string): boolean;
}

/** Compiles the model's pattern for matching one line at a time; a rejected pattern is `INVALID_ARGS`. */
export function compileLineMatcher(pattern: string, ignoreCase: boolean | undefined): LineMatcher {
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw new ToolError(ErrorCode.INVALID_ARGS, `invalid regular expression: longer than ${MAX_PATTERN_CHARS} characters`);
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (e) {
    throw new ToolError(ErrorCode.INVALID_ARGS, `invalid regular expression (RE2 syntax): ${describe(e)}`);
  }
  return { test: (line) => re.test(line) };
}

function describe(e: unknown): string {
  try {
    return e instanceof Error ? e.message : String(e);
  } catch {
    return 'rejected by RE2';
  }
}
