/**
 * Deny patterns for `bash` commands, as a guard (SPEC §2.3: a monotonic guard, no allow can undo
 * it; a match is `GUARD_DENIED`). Patterns are RE2 syntax, matched with re2js in time linear in
 * the command, whatever the command (a model-written command cannot stall the process).
 *
 * A pattern is tried against several spellings of the command, so the cheap dodges fail:
 * - the command as sent;
 * - each simple command in it: split at `;` `&` `|` newlines `(` `)` `{` `}` and backquotes (so
 *   `true; rm -rf x`, `a && rm -rf x`, `$(rm -rf x)` each yield `rm -rf x`, and `^rm` matches);
 * - each of those with quotes and backslashes removed and runs of blanks made one space
 *   (`r''m -rf`, `"rm" -rf`, `\rm -rf`, `rm   -rf`, `rm\t-rf`), with leading
 *   `VAR=value` assignments and the wrappers `sudo`, `command`, `builtin`, `exec`, `env`, `nohup`,
 *   `time`, `nice`, `xargs` dropped, and the directory of the command word dropped
 *   (`/bin/rm`, `./rm`, `sudo env X=1 /usr/bin/rm` → `rm`).
 *
 * What it cannot see, and never will: a deny list over command text is a speed bump, not a
 * sandbox. Shell expansion happens after the check: `x=rm; $x -rf d`, `$(echo cm0= | base64 -d)`,
 * `eval`, `printf '\x72m'`, globs (`/bin/r?`), aliases and functions all run a command whose text
 * never appears. So does a script the model writes with `write` and then runs (`bash ./s.sh`),
 * or another interpreter (`python -c`, `perl -e`, `find -delete`, `git clean`). For a real gate,
 * put `bash` behind an `ask` permission rule (or plan mode), or allow-list commands outside dsh.
 */
import { RE2JS } from 're2js';
import type { Guard } from '../hooks.js';

export interface BashDenyGuardOptions {
  /** RE2 patterns; a command any of them matches (in any spelling above) is denied. */
  readonly patterns: readonly string[];
  /** The tool whose `command` argument is checked (default `bash`). */
  readonly tool?: string;
}

const SEPARATORS = /[;&|\n\r(){}`]+/;
const WRAPPERS = new Set(['sudo', 'command', 'builtin', 'exec', 'env', 'nohup', 'time', 'nice', 'xargs']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** Compiles a pattern, throwing a TypeError that names it when RE2 rejects it. */
export function compileBashPattern(pattern: string): RE2JS {
  try {
    return RE2JS.compile(pattern);
  } catch (e) {
    throw new TypeError(`invalid RE2 pattern ${JSON.stringify(pattern)}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Quotes and backslashes out, blanks collapsed, leading assignments/wrappers and the command's directory dropped. */
function simplify(segment: string): string {
  const words = segment.replace(/['"\\]/g, '').split(/\s+/).filter((w) => w !== '');
  let i = 0;
  while (i < words.length && (ASSIGNMENT.test(words[i]!) || WRAPPERS.has(words[i]!) || (i > 0 && WRAPPERS.has(words[i - 1]!) && words[i]!.startsWith('-')))) i++;
  const rest = words.slice(i);
  if (rest.length > 0) rest[0] = rest[0]!.slice(rest[0]!.lastIndexOf('/') + 1);
  return rest.join(' ');
}

/** The spellings of a command a deny pattern is tried against (see the file comment). */
export function commandSpellings(command: string): string[] {
  const out = new Set<string>([command]);
  // A backslash-newline is a line continuation, not a separator: join first.
  for (const part of command.replace(/\\\r?\n/g, '').split(SEPARATORS)) {
    const raw = part.trim();
    if (raw === '') continue;
    out.add(raw);
    // `$(`: the `$` is left at the end of the previous part; strip a lone trailing `$`.
    const simple = simplify(raw.endsWith('$') ? raw.slice(0, -1) : raw);
    if (simple !== '') out.add(simple);
  }
  return [...out];
}

/** A guard denying every `bash` call whose command matches one of `patterns`. */
export function bashDenyGuard(options: BashDenyGuardOptions): Guard {
  const tool = options.tool ?? 'bash';
  const compiled = options.patterns.map((p) => ({ source: p, re: compileBashPattern(p) }));
  return (call) => {
    if (call.toolName !== tool || compiled.length === 0) return undefined;
    const command = (call.args as { command?: unknown } | null)?.command;
    if (typeof command !== 'string') return undefined;
    const spellings = commandSpellings(command);
    for (const { source, re } of compiled) {
      const hit = spellings.find((s) => re.matcher(s).find());
      if (hit !== undefined) {
        return (
          `the command matches the deny pattern /${source}/ of the user's configuration (in "${hit.slice(0, 200)}"). ` +
          'Do not rerun it in another spelling; find another way that does not need it, or ask the user.'
        );
      }
    }
    return undefined;
  };
}
