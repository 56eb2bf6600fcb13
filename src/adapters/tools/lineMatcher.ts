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

/** Longest pattern accepted, in UTF-16 units. */
export const MAX_PATTERN_CHARS = 4096;
/**
 * Largest compiled program accepted, in RE2 instructions. Matching is linear in the line, but its
 * worst case (RE2's NFA, when its DFA gives up) costs about one step per instruction per character:
 * `(\pL|\pN){1000}x` is 3,003 instructions and took 1.3 s per MB of one long line on the dev
 * machine. 1,500 keeps any pattern under about 0.6 s per MB there; real searches are far smaller
 * (`foo.*bar` is 10, a 20-word alternation under 200).
 */
export const MAX_PROGRAM_INSTRUCTIONS = 1500;

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
  const size = programSize(re);
  if (size > MAX_PROGRAM_INSTRUCTIONS) {
    throw new ToolError(
      ErrorCode.INVALID_ARGS,
      `invalid regular expression: too complex (${size} RE2 instructions, at most ${MAX_PROGRAM_INSTRUCTIONS}); use smaller repetition counts or fewer alternatives`,
    );
  }
  return { test: (line) => re.test(line) };
}

/** Instructions in the compiled program (0 if this RE2JS build does not say). */
function programSize(re: RE2JS): number {
  const prog = (re.re2() as { prog?: { numInst?: () => unknown } }).prog;
  const n = typeof prog?.numInst === 'function' ? prog.numInst() : 0;
  return typeof n === 'number' && Number.isFinite(n) ? n : 0;
}

function describe(e: unknown): string {
  try {
    return e instanceof Error ? e.message : String(e);
  } catch {
    return 'rejected by RE2';
  }
}
