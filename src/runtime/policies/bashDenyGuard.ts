/**
 * Deny patterns for `bash` commands, as a guard (SPEC §2.3: a monotonic guard, no allow can undo
 * it; a match is `GUARD_DENIED`). Patterns are RE2 syntax, matched with re2js in time linear in
 * the command, whatever the command (a model-written command cannot stall the process).
 *
 * A pattern is matched against the commands the line would run, from a real shell parse
 * (shellCommands.ts, SPEC §10.4), not against its text: every simple command after `&&` `||` `;`
 * `|` `&`, inside `$(…)`, backquotes, subshells and process substitutions, after `if` / `while` /
 * `for` / `case` / `!` / `coproc` / `time` and in function bodies, with leading redirections and
 * assignments set aside, quotes and escapes decoded, the command's directory dropped (`/bin/rm`),
 * and through wrappers with their options (`env`, `nice -n 5`, `exec -a x`, `timeout 5`,
 * `setsid`, `stdbuf -o0`, `xargs -a list`, `sudo -u root`, `command`, `builtin`, `nohup`, `time`,
 * `find -exec`) and the strings of `bash -c` and `eval`. See `commandSpellings` (commandRules.ts).
 *
 * What the parse cannot see (a command name built at run time: `$x`, `$(…)`, a glob; `eval` of a
 * string built at run time; a script run by name) the guard cannot deny; the command rules'
 * pre-execute listener (`bashCommandRules`, installed with the deny patterns by `applyConfig`)
 * asks about such a line instead. A line that does not parse at all is matched on its text,
 * split at `;` `&` `|` newlines and brackets, as before the parse existed (`textSpellings`).
 * The OS sandbox, not a pattern, is what bounds a command that runs (SPEC §10.2).
 */
import { RE2JS } from 're2js';
import type { Guard } from '../hooks.js';
import { commandSpellings } from './commandRules.js';
import { parseShellCommand } from './shellCommands.js';

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

/**
 * The spellings of a line the shell parser rejects: the line, and each part of it split at
 * `;` `&` `|` newlines `(` `)` `{` `}` and backquotes, with quotes and backslashes removed,
 * leading assignments and common wrappers dropped, and the command's directory dropped.
 */
export function textSpellings(command: string): string[] {
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
    const parse = parseShellCommand(command);
    const spellings = parse.parsed ? commandSpellings(command, parse) : textSpellings(command);
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
