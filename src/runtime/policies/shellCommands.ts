/**
 * The simple commands a bash command line would run, from a real shell parse (mvdan/sh's bash
 * parser, the one `shfmt` uses, as the `mvdan-sh` package: pure JavaScript, synchronous, no
 * Node built-ins). Command rules (bash deny patterns, allow patterns, remembered approvals) match
 * these, never the text of the line (SPEC §10.4).
 *
 * Found: every simple command anywhere in the parse: after `&&` `||` `;` `|` `&` and newlines,
 * inside `$(…)`, backquotes, `<(…)` `>(…)`, subshells, groups, function bodies, `if` / `while` /
 * `until` / `for` / `case` / `select`, after `!`, `time`, `coproc`, inside `[[ … ]]`, arithmetic,
 * `${x:-…}` and unquoted here-documents; with leading redirections and assignments set aside.
 * Each word is decoded as the shell would (quotes, backslashes, `$'…'` escapes). Then wrappers
 * are looked through, with their options: `env`, `nice`, `nohup`, `time`, `timeout`, `setsid`,
 * `stdbuf`, `xargs`, `sudo`, `doas`, `command`, `builtin`, `exec`, `ionice`, `taskset`,
 * `busybox`, `find -exec/-execdir/-ok/-okdir`; and the command strings of `bash -c` / `sh -c`
 * (and other shells), `eval` and `env -S` are parsed in turn when they are literal.
 *
 * What the parse cannot see is listed in `opaque` (docs/command-rules.md has the full list): a
 * line that does not parse, a command name built at run time (`$cmd`, `$(…)`, a glob or brace
 * pattern), `eval` / `sh -c` of a string built at run time, a shell reading a script file or its
 * input, `source`, and a wrapper option it does not know. Rules never allow such a line. A reason
 * quotes the line's text in bounded pieces: a word or name up to 80 characters, an unknown option up
 * to 40, the parser's message up to 200.
 */
import type { ShNode, ShParser, ShPrinter } from 'mvdan-sh';
import { loadShellSyntax } from './shellSyntax.js';

/** One command of a chain: the words it runs with, as the parse can know them. */
export interface CommandLayer {
  /**
   * The words, each its value after quote removal; a word built at run time (`$x`, `$(…)`) is
   * its source text, and then `literal` is false.
   */
  readonly words: readonly string[];
  /** Every word is known before the line runs. */
  readonly literal: boolean;
  /** More arguments are added at run time (`xargs`, `find -exec`): the words are a prefix. */
  readonly moreArgs: boolean;
  /**
   * It only runs a command string that was parsed in turn (`bash -c '…'`, `eval '…'`), whose
   * commands are in the parse's `commands` of their own.
   */
  readonly delegates?: boolean;
}

/**
 * A simple command and what it runs: `layers[0]` is the command as written; each later layer is
 * the command the one before it runs (`nice -n 5 rm -r v` → `rm -r v`); the last one is what
 * finally runs.
 */
export interface SimpleCommand {
  /** The source text of the simple command as written (assignments and redirections included). */
  readonly source: string;
  readonly layers: readonly CommandLayer[];
  /**
   * The command as written, exactly: its assignments, words and redirections, when every one of
   * them is literal (the key a remembered approval is stored under); undefined otherwise.
   */
  readonly exact?: string;
}

/** A parsed command line. */
export interface CommandParse {
  /** False when the line does not parse (then `commands` is empty and `opaque` says why). */
  readonly parsed: boolean;
  /** Every simple command that would run, in source order (nested ones after the one holding them). */
  readonly commands: readonly SimpleCommand[];
  /** What the parse cannot see, one reason each; empty when it sees every command that would run. */
  readonly opaque: readonly string[];
  /**
   * The whole line as mvdan/sh's printer writes its parse (`shfmt`'s output: spacing and line
   * breaks normalized, comments dropped, quoting and every construct kept): two lines with the
   * same `printed` are the same program. Set when the line parsed.
   */
  readonly printed?: string;
}

/**
 * Variables whose value makes the shell, the loader or a program run something else: a command
 * name that looks the same no longer is (`PATH=. ls` runs `./ls`; `BASH_ENV=x bash -c …` runs x).
 * Setting one is opaque.
 */
const STEERING_VARIABLES = new Set([
  'PATH', 'BASH_ENV', 'ENV', 'PS4', 'PROMPT_COMMAND', 'SHELLOPTS', 'BASHOPTS', 'IFS', 'CDPATH', 'GLOBIGNORE', 'BASH_LOADABLES_PATH',
  'LD_PRELOAD', 'LD_LIBRARY_PATH', 'LD_AUDIT', 'GIT_SSH_COMMAND', 'GIT_SSH', 'GIT_EXTERNAL_DIFF', 'GIT_PAGER', 'GIT_EDITOR', 'GIT_EXEC_PATH',
  'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_GLOBAL', 'PAGER', 'EDITOR', 'VISUAL', 'NODE_OPTIONS', 'PYTHONSTARTUP', 'PERL5OPT', 'RUBYOPT',
]);

function checkAssignment(name: string, out: Sink): void {
  if (STEERING_VARIABLES.has(name) || /^BASH_FUNC_/.test(name)) out.opaque.push(`it sets ${name}, which changes what commands run`);
}

/**
 * Longest line parsed (UTF-16 units); a longer one does not parse. mvdan-sh's JavaScript (GopherJS)
 * costs tens of µs per syntax node on this machine, so a hostile 8 KiB line takes up to about a
 * second of the main thread once (the result is cached); a typical line, a few ms.
 */
export const MAX_PARSED_COMMAND_LENGTH = 8 * 1024;
/** How deep `sh -c` / `eval` strings are parsed in turn. */
const MAX_NESTING = 8;

// The parser is loaded when the first line is parsed (shellSyntax.ts says why); these stand for it.
let mvdan: { readonly syntax: ReturnType<typeof loadShellSyntax>['syntax']; readonly parser: ShParser; readonly printer: ShPrinter } | undefined;
const loaded = () => {
  // Stryker disable next-line ConditionalExpression: loading again gives the same parser (require keeps the module): only slower
  if (!mvdan) {
    const { syntax } = loadShellSyntax();
    mvdan = { syntax, parser: syntax.NewParser(syntax.Variant(syntax.LangBash)), printer: syntax.NewPrinter() };
  }
  return mvdan;
};
const syntax = { NodeType: (node: ShNode) => loaded().syntax.NodeType(node), Walk: (node: ShNode, visit: (node: ShNode | null) => boolean) => loaded().syntax.Walk(node, visit) };
const parser = { Parse: (src: string, name: string) => loaded().parser.Parse(src, name) };
const printer = { Print: (node: ShNode) => loaded().printer.Print(node) };
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Parses `line` (see the module comment). Never throws. */
export function parseShellCommand(line: string): CommandParse {
  const hit = cache.get(line);
  // Stryker disable next-line ConditionalExpression: the cache only saves time (a fresh parse of the same line is equal)
  if (hit) return hit;
  const parsed = Object.freeze(parseAt(line, 0));
  cache.set(line, parsed);
  // Stryker disable next-line ConditionalExpression,EqualityOperator: only bounds the cache's memory (which line is evicted, if any, changes no answer)
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return parsed;
}

// The guard, the rules listener and the approval memory each look at the same call: parse once.
const CACHE_SIZE = 64;
const cache = new Map<string, CommandParse>();

function parseAt(line: string, depth: number): CommandParse {
  if (line.length > MAX_PARSED_COMMAND_LENGTH) {
    return { parsed: false, commands: [], opaque: [`the command is longer than ${MAX_PARSED_COMMAND_LENGTH} characters, too long to check (split it, or write files with the write tool)`] };
  }
  const out = { commands: [] as SimpleCommand[], opaque: [] as string[] };
  let printed: { printed?: string } = {};
  try {
    const file = parser.Parse(line, '');
    // A line nested deep enough exhausts the stack here (`a|a|…` 4000 times parses, but its tree
    // is 4000 levels deep) or in the parser (4000 nested subshells): it does not parse either way.
    collect(file, encoder.encode(line), depth, out);
    // `printed` is the top-level line's (nested `sh -c` strings are part of their line's).
    // Stryker disable next-line ConditionalExpression: only saves time (a nested string's printed form is never read)
    if (depth === 0) printed = { printed: printer.Print(file) };
  } catch (e) {
    return { parsed: false, commands: [], opaque: [`it does not parse as bash: ${describeParseError(e)}`] };
  }
  return { parsed: true, commands: out.commands, opaque: [...new Set(out.opaque)], ...printed };
}

function describeParseError(e: unknown): string {
  const text = typeof (e as { Error?: unknown }).Error === 'function' ? String((e as { Error(): string }).Error()) : e instanceof Error ? e.message : String(e);
  return text.slice(0, 200);
}

interface Sink {
  commands: SimpleCommand[];
  opaque: string[];
}

/** Every command of the tree below `file`, walked with mvdan/sh's own walker (it reaches every node). */
function collect(file: ShNode, bytes: Uint8Array, depth: number, out: Sink): void {
  const text = (n: ShNode) => decoder.decode(bytes.subarray(n.Pos().Offset(), n.End().Offset()));
  // A statement's text, its command's included (mvdan-sh 0.10.1 starts a coproc's inner statement
  // at its second word).
  const span = (a: ShNode, b: ShNode) =>
    decoder.decode(bytes.subarray(Math.min(a.Pos().Offset(), b.Pos().Offset()), Math.max(a.End().Offset(), b.End().Offset())));
  // Where each double-quoted string seen so far ends.
  // Stryker disable next-line ArrayDeclaration: a string entry is never greater than an offset
  const doubleQuoted: number[] = [];
  syntax.Walk(file, (node) => {
    // Walk also calls this with null after a node's children, and ignores the answer.
    // Stryker disable next-line BooleanLiteral: as said
    if (!node) return true;
    const type = syntax.NodeType(node);
    if (type === 'DblQuoted') doubleQuoted.push(node.End().Offset());
    if (node.Backquotes) {
      // (only a CmdSubst has Backquotes)
      // mvdan-sh 0.10.1 misreads backquotes nested three deep (it runs `echo \\\`rm -r v\\\``
      // as `echo` with the words "`rm", "-r", "v`"; bash runs `rm -r v`). The body is read here as
      // bash reads it instead: the text between the backquotes, each `\` before $ ` \ (and " inside
      // double quotes) removed, parsed in turn, and mvdan-sh's own reading of it skipped.
      const left = node.Left.Offset() + 1;
      // Walk goes in source order, so every DblQuoted seen so far starts before this backquote: it
      // holds it when it ends after it. None ends at the body's first character, which follows a
      // backquote (so `<` and `<=` are the same here).
      // Stryker disable next-line EqualityOperator: as said
      const inQuotes = doubleQuoted.some((end) => left < end);
      const body = decoder.decode(bytes.subarray(left, node.Right.Offset())).replace(inQuotes ? /\\([$`\\"])/g : /\\([$`\\])/g, '$1');
      backquoted(body, depth, out);
      return false;
    }
    // A simple command is a statement's CallExpr (only a Stmt has Cmd; a CallExpr is nowhere else).
    if (node.Cmd && syntax.NodeType(node.Cmd) === 'CallExpr') simple(node.Cmd, node.Redirs, span(node, node.Cmd), text, depth, out);
    // `NAME=value` anywhere (before a command, alone, in declare/export/local) and `for NAME in`.
    if ((type === 'Assign' || type === 'WordIter') && node.Name?.Value) checkAssignment(String(node.Name.Value), out);
    if (type === 'DeclClause') {
      // declare / export / local / readonly / typeset / nameref: builtins with assignment arguments.
      const words = [String(node.Variant.Value), ...node.Args.map((a: ShNode) => text(a))];
      out.commands.push({ source: text(node), layers: [{ words, literal: false, moreArgs: false }] });
    } else if (type === 'LetClause') {
      out.commands.push({ source: text(node), layers: [{ words: ['let', ...node.Exprs.map((x: ShNode) => text(x))], literal: false, moreArgs: false }] });
    }
    return true;
  });
}

/** The commands of a backquoted body, unescaped (see `collect`), parsed in turn. */
function backquoted(body: string, depth: number, out: Sink): void {
  if (depth >= MAX_NESTING) {
    out.opaque.push(`backquotes are nested more than ${MAX_NESTING} deep`);
    return;
  }
  const inner = parseAt(body, depth + 1);
  if (!inner.parsed) out.opaque.push(`a backquoted command ${inner.opaque[0]}`);
  out.opaque.push(...(inner.parsed ? inner.opaque : []));
  out.commands.push(...inner.commands);
}

/** A decoded word: its value as the shell would pass it, or its source when built at run time. */
interface Word {
  readonly value: string;
  readonly literal: boolean;
  /** Unquoted glob or brace characters: the shell may turn it into other words. */
  readonly pattern: boolean;
}

function decodeWord(word: ShNode, text: (n: ShNode) => string): Word {
  let value = '';
  let literal = true;
  let pattern = false;
  for (const part of word.Parts) {
    const t = syntax.NodeType(part);
    if (t === 'Lit') {
      const raw = String(part.Value);
      // Escaped characters are dropped (any replacement without glob or brace characters does the same).
      // Stryker disable next-line StringLiteral: as said
      const bare = raw.replace(/\\./g, '');
      if (/[*?[]/.test(bare) || /\{[^}]*(,|\.\.)[^}]*\}/.test(bare)) pattern = true;
      value += raw.replace(/\\(.)/gs, '$1');
    } else if (t === 'SglQuoted') {
      value += part.Dollar ? decodeAnsiC(String(part.Value)) : String(part.Value);
    } else if (t === 'DblQuoted') {
      for (const inner of part.Parts) {
        if (syntax.NodeType(inner) === 'Lit') value += String(inner.Value).replace(/\\([$`"\\])/g, '$1');
        else {
          literal = false;
          value += text(inner);
        }
      }
    } else {
      // ParamExp, CmdSubst, ArithmExp, ProcSubst, ExtGlob, BraceExp: known only at run time.
      literal = false;
      value += text(part);
    }
  }
  return { value, literal, pattern };
}

/** The value of a `$'…'` string (bash's ANSI-C escapes). */
function decodeAnsiC(s: string): string {
  const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' };
  return s.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs, (all, esc: string) => {
    const c = esc[0]!;
    if (c === 'x' || c === 'u' || c === 'U') {
      const cp = parseInt(esc.slice(1), 16);
      return cp <= 0x10ffff ? String.fromCodePoint(cp) : all;
    }
    if (/[0-7]/.test(c)) return String.fromCharCode(parseInt(esc, 8) & 0xff);
    // Left here: `c.` (two characters) or one character.
    if (esc.length === 2) return String.fromCharCode(esc.charCodeAt(1) & 0x1f);
    return simple[c] ?? all;
  });
}

function simple(call: ShNode, redirs: readonly ShNode[], source: string, text: (n: ShNode) => string, depth: number, out: Sink): void {
  const args: ShNode[] = call.Args;
  if (args.length === 0) return; // assignments only: no command runs (what they expand is walked)
  const words = args.map((w) => decodeWord(w, text));
  // (`a[1]=x cmd`, `a=(x) cmd`: inline arrays do not parse.)
  const assigns: ShNode[] = call.Assigns;
  const assignsLiteral = assigns.every((a) => !a.Value || decodeWord(a.Value, text).literal);
  const redirsLiteral = redirs.every((r) => (!r.Word || decodeWord(r.Word, text).literal) && (!r.Hdoc || decodeWord(r.Hdoc, text).literal));
  const literal = words.every((w) => w.literal);
  const exact =
    literal && assignsLiteral && redirsLiteral
      ? JSON.stringify({ assign: assigns.map((a) => text(a)), words: words.map((w) => w.value), redirect: redirs.map((r) => text(r)) })
      : undefined;
  // Before the commands of any string it runs (`bash -c '…'`), which `chains` adds as it parses them.
  const at = out.commands.length;
  const mine = chains(words, source, depth, out).map((layers) => ({ source, layers, ...(exact !== undefined ? { exact } : {}) }));
  out.commands.splice(at, 0, ...mine);
}

const basename = (word: string) => word.slice(word.lastIndexOf('/') + 1);
const layer = (words: readonly Word[], moreArgs: boolean): CommandLayer => ({ words: words.map((w) => w.value), literal: words.every((w) => w.literal), moreArgs });

/**
 * The chains of commands `words` runs: itself, then what each wrapper in it runs. One chain per
 * command that finally runs (`find -exec a \; -exec b \;` has two).
 */
function chains(words: readonly Word[], source: string, depth: number, out: Sink, moreArgs = false): CommandLayer[][] {
  const head = layer(words, moreArgs);
  const name = words[0]!;
  if (!name.literal || name.pattern) {
    out.opaque.push(`the command name ${JSON.stringify(name.value.slice(0, 80))} is built at run time`);
    return [[head]];
  }
  const inner = unwrap(basename(name.value), words, source, depth, out, moreArgs);
  if (inner === DELEGATED) return [[{ ...head, delegates: true }]];
  if (inner.length === 0) return [[head]];
  return inner.flatMap((i) => chains(i.words, source, depth, out, i.moreArgs || moreArgs).map((c) => [head, ...c]));
}

interface Inner {
  readonly words: readonly Word[];
  readonly moreArgs: boolean;
}

/** Returned by `unwrap` for a command that only runs a string parsed in turn. */
const DELEGATED = 'delegated' as const;

/** How a wrapper's options are read (GNU/util-linux/sudo option syntax). */
interface WrapperSpec {
  /** Short options taking a value (attached, `-n5`, or the next word, `-n 5`). */
  readonly valueShort?: string;
  /** Short options whose value is optional and only ever attached (`xargs -i`, `-e`, `-l`). */
  readonly optionalShort?: string;
  readonly flagShort?: string;
  /** Long options taking a value (`--signal=KILL` or `--signal KILL`). */
  readonly valueLong?: readonly string[];
  /** Long options without a value, or with an optional attached one (`--preserve-env[=list]`). */
  readonly flagLong?: readonly string[];
  /** `-5` is an option (`nice -5`). */
  readonly numeric?: boolean;
  /** Operands before the command (`timeout DURATION`, `taskset MASK`). */
  readonly operands?: number;
  /** `NAME=value` words before the command (`env`, `sudo`). */
  readonly assignments?: boolean;
  /** The command gets more arguments at run time. */
  readonly moreArgs?: boolean;
  /** What runs when no command is given (`xargs` → `echo`). */
  readonly defaultCommand?: string;
  /** Options after which no command runs (`sudo -e` edits files, `ionice -p` changes a process). */
  readonly noCommand?: readonly string[];
}

const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  env: { valueShort: 'uCS', flagShort: 'i0v', valueLong: ['unset', 'chdir', 'split-string'], flagLong: ['ignore-environment', 'null', 'debug', 'default-signal', 'ignore-signal', 'block-signal', 'list-signal-handling'], assignments: true },
  nice: { valueShort: 'n', valueLong: ['adjustment'], numeric: true },
  nohup: {},
  time: { valueShort: 'fo', flagShort: 'apqv', valueLong: ['format', 'output'], flagLong: ['append', 'portability', 'quiet', 'verbose'] },
  timeout: { valueShort: 'sk', flagShort: 'v', valueLong: ['signal', 'kill-after'], flagLong: ['preserve-status', 'foreground', 'verbose'], operands: 1 },
  setsid: { flagShort: 'cfw', flagLong: ['ctty', 'fork', 'wait'] },
  stdbuf: { valueShort: 'ioe', valueLong: ['input', 'output', 'error'] },
  xargs: {
    valueShort: 'adEILnPs',
    optionalShort: 'eil',
    flagShort: '0prtxo',
    valueLong: ['arg-file', 'delimiter', 'max-args', 'max-procs', 'max-chars', 'process-slot-var'],
    flagLong: ['null', 'no-run-if-empty', 'interactive', 'verbose', 'exit', 'open-tty', 'show-limits', 'eof', 'replace', 'max-lines'],
    moreArgs: true,
    defaultCommand: 'echo',
  },
  sudo: {
    valueShort: 'ugCDprtTUR',
    flagShort: 'AbEeHhiKklnPSsVvB',
    valueLong: ['user', 'group', 'close-from', 'chdir', 'host', 'prompt', 'role', 'type', 'command-timeout', 'other-user', 'chroot'],
    flagLong: ['askpass', 'background', 'preserve-env', 'edit', 'set-home', 'login', 'remove-timestamp', 'reset-timestamp', 'list', 'non-interactive', 'preserve-groups', 'stdin', 'shell', 'version', 'validate', 'bell', 'help'],
    assignments: true,
    noCommand: ['-e', '--edit'],
  },
  doas: { valueShort: 'uC', flagShort: 'nsL' },
  command: { flagShort: 'pvV' },
  builtin: {},
  exec: { valueShort: 'a', flagShort: 'cl' },
  ionice: { valueShort: 'cnpPu', flagShort: 't', valueLong: ['class', 'classdata', 'pid', 'pgid', 'uid'], flagLong: ['ignore'], noCommand: ['-p', '-P', '-u', '--pid', '--pgid', '--uid'] },
  taskset: { flagShort: 'ac', flagLong: ['all-tasks', 'cpu-list'], operands: 1, noCommand: ['-p', '--pid'] },
  busybox: {},
};

/** Wrappers that change who runs the command: an allow rule must name them too. */
export const PRIVILEGE_WRAPPERS: ReadonlySet<string> = new Set(['sudo', 'doas']);

const SHELLS = new Set(['bash', 'sh', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'rbash']);

/** The commands `words` (named `name`) runs when it is a wrapper, `eval`, a shell or `find`; none otherwise. */
function unwrap(name: string, words: readonly Word[], source: string, depth: number, out: Sink, moreArgs: boolean): Inner[] | typeof DELEGATED {
  if (name === 'eval') return nested(words.slice(1), 'eval', depth, out);
  if (name === 'source' || name === '.') {
    if (words.length > 1) out.opaque.push(`\`${name}\` runs the script ${JSON.stringify(words[1]!.value.slice(0, 80))}, which the parse cannot see`);
    return [];
  }
  if (SHELLS.has(name)) return shell(name, words, depth, out, moreArgs);
  if (name === 'alias') {
    // `alias x='rm -r v'` (with expand_aliases on, `x` runs it): the value is parsed in turn.
    let delegated = false;
    for (const w of words.slice(1)) {
      const eq = w.value.indexOf('=');
      if (eq <= 0) continue;
      if (nested([{ ...w, value: w.value.slice(eq + 1) }], 'alias', depth, out) === DELEGATED) delegated = true;
    }
    return delegated ? DELEGATED : [];
  }
  if (name === 'find') return findExec(words);
  const spec = WRAPPERS[name];
  if (!spec) return [];
  let i = 1;
  const more = spec.moreArgs === true;
  const fallback = () => {
    // Where the command starts is unknown: every later word may be it (deny rules try them all).
    const rest: Inner[] = [];
    for (let j = i + 1; j < words.length; j++) if (!words[j]!.value.startsWith('-')) rest.push({ words: words.slice(j), moreArgs: more });
    return rest;
  };
  let operands = spec.operands ?? 0;
  // `xargs -I R` / `-i[R]` / `--replace[=R]`: R in a word of the command is replaced by input.
  let replace: string | undefined;
  for (; i < words.length; i++) {
    const w = words[i]!;
    const v = w.value;
    if (!w.literal) {
      out.opaque.push(`\`${name}\` is given a word built at run time (${JSON.stringify(v.slice(0, 80))}): where its command starts is not known`);
      return fallback();
    }
    if (spec.noCommand?.some((o) => v === o || v.startsWith(`${o}=`))) return [];
    if (v === '--') {
      i++;
      break;
    }
    if (v.startsWith('--')) {
      const [long, attached] = v.slice(2).split('=', 2) as [string, string | undefined];
      if (spec.valueLong?.includes(long)) {
        if (attached === undefined) i++;
        if (long === 'split-string') return envSplit(attached ?? words[i]?.value, words.slice(i + 1), depth, out);
        continue;
      }
      if (spec.flagLong?.includes(long)) {
        if (long === 'replace') replace = attached ?? '{}';
        continue;
      }
      out.opaque.push(`\`${name}\` has an option the parse does not know (${JSON.stringify(v.slice(0, 40))}): where its command starts is not certain`);
      return [...fallback(), { words: words.slice(i + 1), moreArgs: more }].filter((x) => x.words.length > 0);
    }
    if (v.startsWith('-') && v.length > 1) {
      if (spec.numeric && /^-\d+$/.test(v)) continue;
      let known = true;
      for (let k = 1; k < v.length; k++) {
        const c = v[k]!;
        if (spec.flagShort?.includes(c)) continue;
        if (spec.optionalShort?.includes(c)) {
          if (c === 'i') replace = v.slice(k + 1) || '{}';
          break;
        }
        if (spec.valueShort?.includes(c)) {
          const attached = v.slice(k + 1);
          if (attached === '') i++;
          // A replace string built at run time (`-I "$r"`) may be in any word: '' is in every one.
          if (c === 'I') replace = attached === '' ? (words[i]?.literal ? words[i]!.value : '') : attached;
          if (c === 'S') return envSplit(attached === '' ? words[i]?.value : attached, words.slice(i + 1), depth, out);
          break;
        }
        known = false;
        break;
      }
      if (known) continue;
      out.opaque.push(`\`${name}\` has an option the parse does not know (${JSON.stringify(v.slice(0, 40))}): where its command starts is not certain`);
      return [...fallback(), { words: words.slice(i + 1), moreArgs: more }].filter((x) => x.words.length > 0);
    }
    // Any word with `=` is an assignment to `env` and `sudo` (GNU env putenv()s it, whatever the
    // name: `env 'BASH_FUNC_ls%%=() { rm -r v; }' bash -c ls` runs `rm -r v`).
    if (spec.assignments && v.includes('=')) {
      checkAssignment(v.slice(0, v.indexOf('=')), out);
      continue;
    }
    if (operands > 0) {
      operands--;
      continue;
    }
    break;
  }
  const rest = replace === undefined ? words.slice(i) : replaced(words.slice(i), replace);
  if (rest.length === 0) return spec.defaultCommand ? [{ words: [{ value: spec.defaultCommand, literal: true, pattern: false }], moreArgs: more }] : [];
  return [{ words: rest, moreArgs: more }];
}

/** `find … -exec cmd … ;` (and `-execdir`, `-ok`, `-okdir`, ended by `;` or `+`): each command it runs. */
function findExec(words: readonly Word[]): Inner[] {
  const out: Inner[] = [];
  for (let i = 1; i < words.length; i++) {
    if (!['-exec', '-execdir', '-ok', '-okdir'].includes(words[i]!.value)) continue;
    let j = i + 1;
    while (j < words.length && words[j]!.value !== ';' && words[j]!.value !== '+') j++;
    if (j > i + 1) out.push({ words: replaced(words.slice(i + 1, j), '{}'), moreArgs: true });
    i = j;
  }
  return out;
}

/**
 * Words holding `marker`, which `find -exec` (`{}`) or `xargs -I` replaces with a file name or a
 * line of input, are known only at run time: `find / -name rm -exec {} -r v ;` runs `rm`, `xargs
 * -I{} sh -c '{}'` runs its input.
 */
function replaced(words: readonly Word[], marker: string): Word[] {
  return words.map((w) => (w.value.includes(marker) ? { ...w, literal: false } : w));
}

/**
 * `bash [options] -c STRING …` parses STRING in turn; a shell running a script or its input is
 * opaque, and so is `-c` without its string where more arguments come at run time (`xargs sh -c`
 * runs its input).
 */
function shell(name: string, words: readonly Word[], depth: number, out: Sink, moreArgs: boolean): Inner[] | typeof DELEGATED {
  let hasC = false;
  let i = 1;
  for (; i < words.length; i++) {
    const w = words[i]!;
    const v = w.value;
    if (!w.literal) break; // the command string or the script: said below
    if (v === '--' || v === '-') {
      i++;
      break;
    }
    if (v.startsWith('--')) {
      if (v === '--rcfile' || v === '--init-file') i++;
      continue;
    }
    if ((v.startsWith('-') || v.startsWith('+')) && v.length > 1) {
      if (v.includes('c')) hasC = true;
      // -o / +o / -O / +O take an option name.
      if (/[oO]/.test(v)) i++;
      continue;
    }
    break;
  }
  if (hasC) {
    if (i >= words.length) {
      if (moreArgs) out.opaque.push(`\`${name} -c\` runs a command string given at run time`);
      return [];
    }
    return nested([words[i]!], `${name} -c`, depth, out);
  }
  out.opaque.push(
    i < words.length
      ? `\`${name}\` runs the script ${JSON.stringify(words[i]!.value.slice(0, 80))}, which the parse cannot see`
      : `\`${name}\` runs commands from its input, which the parse cannot see`,
  );
  return [];
}

/** `env -S STRING cmd…`: the split string and the words after it form the command. */
function envSplit(split: string | undefined, after: readonly Word[], depth: number, out: Sink): Inner[] | typeof DELEGATED {
  if (split === undefined) return [];
  // (A word built at run time makes the string one: `nested` then parses nothing.)
  const words = [split, ...after.map((w) => quote(w.value))].join(' ');
  return nested([{ value: words, literal: after.every((w) => w.literal) }], 'env -S', depth, out);
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The command string that `eval` or `sh -c` runs, parsed in turn. Its commands are added to
 * `out` as commands of their own (every one must pass the rules), so nothing runs "inside" the
 * wrapper as far as the chain goes.
 */
function nested(words: readonly Pick<Word, 'value' | 'literal'>[], what: string, depth: number, out: Sink): Inner[] | typeof DELEGATED {
  if (words.length === 0) return [];
  if (!words.every((w) => w.literal)) {
    out.opaque.push(`\`${what}\` runs a command string built at run time`);
    return [];
  }
  if (depth >= MAX_NESTING) {
    out.opaque.push(`\`${what}\` strings are nested more than ${MAX_NESTING} deep`);
    return [];
  }
  const inner = parseAt(words.map((w) => w.value).join(' '), depth + 1);
  if (!inner.parsed) out.opaque.push(`the command string of \`${what}\` ${inner.opaque[0]}`);
  else out.opaque.push(...inner.opaque);
  out.commands.push(...inner.commands);
  return inner.parsed ? DELEGATED : [];
}
