// The `dsh` executable as a user runs it (a real process, from source through tsx): what it prints
// where, and its exit codes: 0 done, 1 failed (one line on stderr, no stack unless DSH_DEBUG=1),
// 2 bad usage (the usage on stderr). test/package/pack.test.ts runs the same binary built and installed.
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'src', 'cli', 'bin.ts');
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
const dir = mkdtempSync(join(tmpdir(), 'dsh-cli-exit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number | null;
  out: string;
  err: string;
}

/** Runs `dsh ...argv` in its own process (generous bound: only a hang fails it). */
function dsh(argv: string[], options: { env?: Record<string, string>; uid?: number; gid?: number } = {}): Promise<Run> {
  const env = { ...process.env, ...options.env };
  if (!options.env?.DSH_DEBUG) delete env.DSH_DEBUG;
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ['--import', 'tsx', bin, ...argv], { cwd: root, env, timeout: 120_000, uid: options.uid, gid: options.gid }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, out: stdout, err: stderr });
    });
    // Nothing on stdin (a socket pair here, which dsh run reads to its end when no PROMPT is given).
    child.stdin?.end();
  });
}

const lines = (text: string) => text.split('\n').filter((l) => l !== '');
const HANG = 180_000;

describe('dsh help and version', () => {
  it('-h and --help print the usage on stdout, exit 0', async () => {
    for (const flag of ['-h', '--help']) {
      const r = await dsh([flag]);
      expect(r.code).toBe(0);
      expect(r.err).toBe('');
      expect(r.out).toMatch(/^usage:\n {2}dsh run \[PROMPT\]/);
      for (const c of ['dsh sessions', 'dsh resume ID|FILE [PROMPT]', 'dsh log ID|FILE', 'dsh repair ID|FILE', 'dsh [tour] [--log FILE]']) expect(r.out).toContain(c);
      expect(r.out).toMatch(/130 a run cancelled with Ctrl-C/);
      expect(r.out).toContain('--version');
    }
  }, HANG);

  it('--version prints the package version alone (it does not run the tour)', async () => {
    const r = await dsh(['--version']);
    expect(r).toEqual({ code: 0, out: `${version}\n`, err: '' });
  }, HANG);

  it('dsh <cmd> --help, -h and dsh help <cmd> print that command\'s usage, exit 0', async () => {
    for (const argv of [['log', '--help'], ['log', '-h'], ['help', 'log'], ['tour', '--help']]) {
      const r = await dsh(argv);
      expect(r.code, argv.join(' ')).toBe(0);
      expect(r.err).toBe('');
      expect(r.out).toMatch(argv.includes('tour') ? /^usage: dsh \[tour\] \[--log FILE\]\n/ : /^usage: dsh log ID\|FILE \[--json\] \[--full\]\n/);
      expect(r.out).toMatch(/Exit: 0 /);
    }
  }, HANG);
});

describe('dsh usage errors: exit 2, the message and the usage on stderr, nothing on stdout', () => {
  const cases: Array<[string[], RegExp]> = [
    [['frobnicate'], /^dsh: unknown command "frobnicate"$/],
    [['--bogus'], /^dsh tour: Unknown option '--bogus'$/],
    [['log', '--bogus', 'x.jsonl'], /^dsh log: Unknown option '--bogus'$/],
    [['tour', 'extra'], /^dsh tour: unexpected argument: extra$/],
    [['log'], /^dsh log: missing ID\|FILE/],
    [['run', '--model', 'embedded'], /^dsh run: missing PROMPT \(without a terminal there is no REPL; the prompt may also come on stdin\)$/],
    [['resume'], /^dsh resume: missing ID/],
    [['run', '--model', 'embedded', 'x', '--allow'], /^dsh run: Option '--allow <value>' argument missing$/],
    [['log', 'a.jsonl', 'b.jsonl'], /^dsh log: unexpected argument: b\.jsonl$/],
    [['--log'], /^dsh tour: Option '--log <value>' argument missing$/],
    [['--version', 'now'], /^dsh: unexpected argument: now$/],
    [['--help', 'me'], /^dsh: unexpected argument: me$/],
    [['help', 'frobnicate'], /^dsh: unknown command "frobnicate"$/],
  ];
  for (const [argv, message] of cases) {
    it(`dsh ${argv.join(' ')}`, async () => {
      const r = await dsh(argv);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      const [first, ...rest] = lines(r.err);
      expect(first).toMatch(message);
      expect(rest.join('\n')).toMatch(/^usage:/m);
      expect(r.err).not.toMatch(/\n\s+at /);
    }, HANG);
  }
});

describe('dsh file errors: exit 1, one line on stderr, the stack only with DSH_DEBUG=1', () => {
  const oneLine = (r: Run, message: RegExp) => {
    expect(r.code).toBe(1);
    expect(lines(r.err)).toHaveLength(1);
    expect(r.err.trimEnd()).toMatch(message);
  };

  it('a missing file (ENOENT), a directory (EISDIR), a path through a file (ENOTDIR)', async () => {
    const missing = join(dir, 'missing.jsonl');
    oneLine(await dsh(['log', missing]), new RegExp(`^dsh log: ${missing}: no such file or directory$`));
    oneLine(await dsh(['log', dir]), new RegExp(`^dsh log: ${dir}: is a directory$`));
    oneLine(await dsh(['tour', '--log', dir]), new RegExp(`^dsh tour: ${dir}: is a directory$`));
    const file = join(dir, 'plain.txt');
    writeFileSync(file, 'x');
    oneLine(await dsh(['tour', '--log', join(file, 'inner.jsonl')]), /^dsh tour: .*plain\.txt\/inner\.jsonl: a part of the path is not a directory$/);
    oneLine(await dsh(['--log', join(dir, 'no', 'such', 'dir', 's.jsonl')]), /^dsh tour: .*: no such file or directory$/);
  }, HANG);

  // root reads anything: as root, the command runs as `nobody`, which needs to read this checkout.
  const asNobody = process.getuid?.() === 0;
  const nobodyCanRun =
    !asNobody ||
    spawnSync(process.execPath, ['-e', 'for (const f of process.argv.slice(1)) require("fs").accessSync(f, require("fs").constants.R_OK)', bin, join(root, 'node_modules', 'tsx', 'package.json')], { uid: 65534, gid: 65534, timeout: 60_000 }).status === 0;

  it.skipIf(!nobodyCanRun)('a file it may not read (EACCES)', async () => {
    chmodSync(dir, 0o755); // mkdtemp makes it 0700: only the file's own mode is to refuse
    const locked = join(dir, 'locked');
    mkdirSync(locked, { mode: 0o755 });
    const file = join(locked, 'secret.jsonl');
    writeFileSync(file, '');
    chmodSync(file, 0o000);
    const as = asNobody ? { uid: 65534, gid: 65534, env: { HOME: locked } } : {};
    oneLine(await dsh(['log', file], as), new RegExp(`^dsh log: ${file}: permission denied$`));
    oneLine(await dsh(['tour', '--log', file], as), new RegExp(`^dsh tour: ${file}: permission denied$`));
  }, HANG);

  it('a corrupt log: one line naming the file, the line and the code; DSH_DEBUG=1 adds the stack', async () => {
    const file = join(dir, 'corrupt.jsonl');
    writeFileSync(file, '{"seq": 1, "type": "tool/ca\n{}\n');
    const plain = await dsh(['log', file]);
    oneLine(plain, new RegExp(`^dsh log: ${file}:1: INVALID_JSON`));
    oneLine(await dsh(['tour', '--log', file]), new RegExp(`^dsh tour: ${file}:1: INVALID_JSON`));
    const debug = await dsh(['log', file], { env: { DSH_DEBUG: '1' } });
    expect(debug.code).toBe(1);
    const [first, ...stack] = lines(debug.err);
    expect(first).toBe(lines(plain.err)[0]);
    expect(stack.join('\n')).toMatch(/^JsonlLogError: .*\n\s+at /);
  }, HANG);
});
