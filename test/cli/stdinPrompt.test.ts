// Issue 32 item 5: a program that spawns `dsh run` with Node's child_process (stdin a socket pair,
// as editors, CI tools and orchestrators do) and writes the prompt to it gets that prompt run,
// with no PROMPT argument and with `-`. A prompt given as an argument is not held up by a stdin
// the spawner never closes.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dshArgv, testEnv } from './spawnDsh.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function spawnDsh(args: string[], stdin: string | undefined): Promise<{ code: number | null; out: string; err: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-stdin-'));
  dirs.push(dir);
  mkdirSync(join(dir, '.git'));
  const [node, ...rest] = dshArgv(...args);
  // The default stdio: stdin is a pipe, which Node makes a socket pair.
  const child = spawn(node!, rest, { cwd: dir, env: testEnv({ XDG_CONFIG_HOME: join(dir, 'xdg') }) });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  if (stdin !== undefined) child.stdin.end(stdin);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

const turnInput = (out: string) =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { type?: string; input?: string })
    .find((e) => e.type === 'turn/start')?.input;

describe('dsh run reads its prompt from a socket on stdin', () => {
  it('no PROMPT argument: the prompt written to the socket is the turn\'s input', async () => {
    const r = await spawnDsh(['run', '--model', 'embedded', '--json'], 'look around please\n');
    expect(r.code, r.err).toBe(0);
    expect(turnInput(r.out)).toBe('look around please');
  }, 120_000);

  it('`-` reads it explicitly', async () => {
    const r = await spawnDsh(['run', '--model', 'embedded', '--json', '-'], 'from the dash\n');
    expect(r.code, r.err).toBe(0);
    expect(turnInput(r.out)).toBe('from the dash');
  }, 120_000);

  it('a PROMPT argument is run while the spawner keeps stdin open', async () => {
    const r = await spawnDsh(['run', '--model', 'embedded', '--json', 'the argument'], undefined);
    expect(r.code, r.err).toBe(0);
    expect(turnInput(r.out)).toBe('the argument');
  }, 120_000);
});
