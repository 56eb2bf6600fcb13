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
 * The same check (`bashDenyCheck`) runs twice: first in the command rules' pre-execute listener
 * (`bashCommandRules`, installed with the deny patterns by `applyConfig`), so a command a pattern
 * denies is denied before anyone is asked about it; then as the guard, the irrevocable last line
 * after any approval. What the parse cannot see (a command name built at run time: `$x`, `$(…)`,
 * a glob; `eval` of a string built at run time; a script run by name) cannot be denied by a
 * pattern; the listener asks about such a line instead. A line that does not parse at all (a syntax error, a construct
 * the parser rejects, a line over `MAX_PARSED_COMMAND_LENGTH`) is denied: the patterns cannot be
 * checked against it. The OS sandbox, not a pattern, is what bounds a command that runs
 * (SPEC §10.2).
 */
import { RE2JS } from 're2js';
import type { Guard } from '../hooks.js';
import { commandSpellings, type BashDenyCheck } from './commandRules.js';
import { parseShellCommand } from './shellCommands.js';

/** The deny patterns of `bashDenyGuard`. */
export interface BashDenyGuardOptions {
  /** RE2 patterns (with the file each came from, when known); a command any of them matches (in any spelling above) is denied. */
  readonly patterns: readonly DenyPattern[];
  /** The tool whose `command` argument is checked (default `bash`). */
  readonly tool?: string;
}

/** Compiles a pattern, throwing a TypeError that names it when RE2 rejects it. */
export function compileBashPattern(pattern: string): RE2JS {
  try {
    return RE2JS.compile(pattern);
  } catch (e) {
    throw new TypeError(`invalid RE2 pattern ${JSON.stringify(pattern)}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** A deny pattern: its RE2 source, or the source with the file it came from (named in a denial). */
export type DenyPattern = string | { readonly pattern: string; readonly from?: string };

/** The deny patterns as one check (see the module note), shared by the guard and the command rules' listener. */
export function bashDenyCheck(patterns: readonly DenyPattern[]): BashDenyCheck {
  const compiled = patterns.map((p, index) => {
    const { pattern: source, from: of = 'the configuration' } = typeof p === 'string' ? { pattern: p } : p;
    return { source, index, of, re: compileBashPattern(source) };
  });
  return (command, parse = parseShellCommand(command)) => {
    if (compiled.length === 0) return undefined;
    if (!parse.parsed) {
      return {
        reason:
          `the command cannot be checked against the deny patterns of the configuration: ${parse.opaque[0]}. ` +
          'Rewrite it as plain bash the rules can read (fix the syntax, split it into shorter commands, use $(…) instead of backquotes).',
        rule: 'bash.deny: a command that does not parse',
      };
    }
    const spellings = commandSpellings(command, parse);
    for (const { source, index, of, re } of compiled) {
      const hit = spellings.find((s) => re.matcher(s).find());
      if (hit !== undefined) {
        return {
          reason:
            `the command matches the deny pattern /${source}/ of ${of} (in "${hit.slice(0, 200)}"). ` +
            'Do not rerun it in another spelling; find another way that does not need it, or ask the user.',
          rule: `bash.deny[${index}] /${source}/`,
        };
      }
    }
    return undefined;
  };
}

/** A guard denying every `bash` call whose command matches one of `patterns`. */
export function bashDenyGuard(options: BashDenyGuardOptions): Guard {
  const tool = options.tool ?? 'bash';
  const check = bashDenyCheck(options.patterns);
  return (call) => {
    if (call.toolName !== tool) return undefined;
    const command = (call.args as { command?: unknown } | null)?.command;
    return typeof command === 'string' ? check(command) : undefined;
  };
}
