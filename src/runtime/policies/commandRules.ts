/**
 * Command rules on the parse of a bash line (shellCommands.ts), not on its text (SPEC §10.4):
 * - `commandSpellings`: the strings a deny pattern is tried against (every command of every chain);
 * - `allowedByPatterns`: whether allow patterns cover everything the line runs;
 * - `bashCommandRules`: the pre-execute listener that asks about what the rules cannot see and
 *   about commands an allow list does not cover;
 * - `commandApprovalKeys`: what an `allowed-always` answer to a bash call remembers (the whole
 *   line as parsed, printed in a normal form: never a part of it, never a command name alone).
 * docs/command-rules.md says what each sees and what it cannot.
 */
import type { PreExecuteDecision } from '../../protocol/index.js';
import type { PreExecuteListener } from '../hooks.js';
import { PRIVILEGE_WRAPPERS, parseShellCommand, type CommandLayer, type CommandParse, type SimpleCommand } from './shellCommands.js';

/** Matches one string (a compiled RE2 pattern's `find`). */
export type CommandMatcher = (spelling: string) => boolean;

const MORE_ARGS = '<more args at run time>';

/** The spellings of one command of a chain: its words, and with the command's directory dropped (`/bin/rm` → `rm`). */
export function layerSpellings(l: CommandLayer): string[] {
  if (l.words.length === 0) return [];
  const tail = l.moreArgs ? [MORE_ARGS] : [];
  const words = [...l.words, ...tail];
  const first = words[0]!;
  const base = first.slice(first.lastIndexOf('/') + 1);
  const out = [words.join(' ')];
  if (base !== first) out.push([base, ...words.slice(1)].join(' '));
  return out;
}

/**
 * Every string a deny pattern is tried against for a parsed line: the line as sent, each simple
 * command's source text, and the spellings of every command of every chain (`nice -n 5 rm -r v`
 * gives `nice -n 5 rm -r v` and `rm -r v`).
 */
export function commandSpellings(line: string, parse: CommandParse = parseShellCommand(line)): string[] {
  const out = new Set<string>([line]);
  for (const c of parse.commands) {
    out.add(c.source);
    for (const l of c.layers) for (const s of layerSpellings(l)) out.add(s);
  }
  return [...out];
}

/**
 * True when the allow patterns cover everything the line runs: it parsed, the parse sees every
 * command (`opaque` is empty), and for each simple command the command that finally runs matches
 * a pattern, and so does every wrapper that changes who runs it (`sudo`, `doas`).
 */
export function allowedByPatterns(parse: CommandParse, allow: readonly CommandMatcher[]): boolean {
  // (A line that does not parse has no commands, and says why in `opaque`; a line that runs no
  // command at all, an assignment or a comment, is not one the patterns cover either.)
  if (parse.opaque.length > 0 || parse.commands.length === 0) return false;
  return parse.commands.every((c) => commandAllowed(c, allow));
}

/**
 * Whether the allow patterns cover one simple command: the command that finally runs matches a
 * pattern, and so does every wrapper that changes who runs it (`sudo`, `doas`). The words as
 * written only: `/bin/ls` or `./ls` is not `ls` for an allow pattern (a deny pattern also sees
 * `ls`): `./ls` may be a script the model wrote.
 */
function commandAllowed(c: SimpleCommand, allow: readonly CommandMatcher[]): boolean {
  const matches = (l: CommandLayer) => {
    const spelling = layerSpellings(l)[0];
    // Stryker disable next-line ConditionalExpression: a parse lists no command without words, so every layer has a spelling (the check only narrows the type)
    return spelling !== undefined && allow.some((m) => m(spelling));
  };
  const last = c.layers[c.layers.length - 1]!;
  // `bash -c '…'` / `eval '…'`: the string's own commands are checked as commands of their own.
  if (!last.delegates && !matches(last)) return false;
  // Stryker disable next-line MethodExpression: the last layer is the command itself, not a wrapper (and it matched above)
  return c.layers.slice(0, -1).every((l) => {
    const name = l.words[0]!; // a wrapper layer has its name
    return !PRIVILEGE_WRAPPERS.has(name.slice(name.lastIndexOf('/') + 1)) || matches(l);
  });
}

/** The commands of a parse that the allow patterns do not cover, as they finally run (for a question's reason). */
function uncovered(parse: CommandParse, allow: readonly CommandMatcher[]): string[] {
  return parse.commands.filter((c) => !commandAllowed(c, allow)).map((c) => c.layers[c.layers.length - 1]!.words.join(' '));
}

/** Why the deny patterns refuse a command (and which rule), or undefined when none does (`bashDenyCheck` in bashDenyGuard.ts makes one). */
export type BashDenyCheck = (command: string, parse?: CommandParse) => { reason: string; rule: string } | undefined;

/** The allow and deny patterns of `bashCommandRules`, matched against every command of a parsed line. */
export interface BashCommandRulesOptions {
  /** Allow patterns (compiled): a line all of whose commands match runs without a question. */
  readonly allow: readonly CommandMatcher[];
  /**
   * The deny patterns' check, when there are any: a command they refuse is denied here, before
   * anyone is asked (the guard denies it again, irrevocably, after any approval); a line the parse
   * cannot fully see is asked about.
   */
  readonly deny?: BashDenyCheck;
  /** The tool whose `command` argument is checked (default `bash`). */
  readonly tool?: string;
}

/**
 * The pre-execute listener of the command rules. For a `bash` call:
 * - a line the parse cannot fully see (it does not parse, builds a command name at run time, runs
 *   a script or a string built at run time…) is asked about, never allowed by a rule;
 * - with allow patterns, a line they cover is allowed, and any other line is asked about;
 * - otherwise the later listeners decide.
 * A later listener's `deny` always wins (it is consulted with `next()` first), so a permission rule
 * denying `bash` is not undone by an allow pattern; the deny patterns themselves are a guard.
 */
export function bashCommandRules(options: BashCommandRulesOptions): PreExecuteListener {
  const tool = options.tool ?? 'bash';
  return async (call, next) => {
    if (call.toolName !== tool) return next();
    const command = (call.args as { command?: unknown } | null)?.command;
    if (typeof command !== 'string') return next();
    const parse = parseShellCommand(command);
    // Deny before ask: a command a deny pattern refuses (or that cannot be checked) is never asked about.
    const denied = options.deny?.(command, parse);
    if (denied) return { kind: 'deny', reason: denied.reason, rule: denied.rule };
    let mine: PreExecuteDecision | undefined;
    if (!parse.parsed || parse.opaque.length > 0) {
      if (options.deny || options.allow.length > 0) {
        mine = {
          kind: 'ask',
          reason: `the command rules cannot see everything this command runs (${parse.opaque.slice(0, 3).join('; ')}), so no rule allows it`,
          rule: 'bash: a command the parse cannot see',
        };
      }
    } else if (options.allow.length > 0) {
      if (allowedByPatterns(parse, options.allow)) mine = { kind: 'allow', rule: 'bash.allow: every command matches' };
      else {
        const missed = uncovered(parse, options.allow).slice(0, 3).map((c) => JSON.stringify(c.slice(0, 120))).join(', ');
        mine = { kind: 'ask', reason: `not covered by the bash allow patterns: ${missed}`, rule: `bash.allow: no pattern covers ${missed}` };
      }
    }
    // Stryker disable next-line ConditionalExpression: without a decision of its own, the later answer is the answer either way (a listener returning nothing hands over)
    if (!mine) return next();
    const later = await next();
    return later.kind === 'deny' ? later : mine;
  };
}

/**
 * What an `allowed-always` answer to a bash call remembers: the whole line as parsed (its
 * `printed` form: the program, with spacing and comments normalized away) and the call's other
 * arguments, as one key. A later call is remembered only when its key is equal: the same program,
 * run from the same place (every bash call starts in the workspace root). Never a part of the
 * line: approving `true || rm -rf x`, `if false; then rm -rf x; fi`, `f() { rm -rf x; }`,
 * `cd sub && rm -rf x` or `echo x | xargs rm -rf` does not cover a plain `rm -rf x`, since what
 * runs and where depends on everything around it (SPEC §10.6). Undefined (never remembered) when
 * the parse cannot see everything, or a command has a word built at run time.
 */
export function commandApprovalKeys(args: { readonly command: string } & Readonly<Record<string, unknown>>, ignore: readonly string[] = ['timeoutMs']): readonly string[] | undefined {
  const parse = parseShellCommand(args.command);
  if (parse.commands.length === 0) return undefined;
  // Stryker disable next-line ConditionalExpression,LogicalOperator: a line the parse cannot see has a command built at run time (no `exact`, below), and a parsed line is printed; the check says so first
  if (parse.opaque.length > 0 || parse.printed === undefined) return undefined;
  if (parse.commands.some((c) => c.exact === undefined)) return undefined;
  const rest = Object.fromEntries(
    Object.keys(args)
      .sort()
      .filter((k) => k !== 'command' && !ignore.includes(k))
      .map((k) => [k, args[k]]),
  );
  return [`${JSON.stringify(rest)}\u0000${parse.printed}`];
}
