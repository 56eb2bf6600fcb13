// Issue 31 item 7 end to end: `dsh run` on a real terminal (a tmux pane), a scripted model. The
// person answers `a` (allow always) to `cd sub && rm -rf victim`; the model's next call, a plain
// `rm -rf victim`, is asked about again (it would delete the root's victim), and `n` keeps it.
// Before issue 31 the answer was remembered per simple command, and the root's victim was deleted
// unasked. Needs tmux.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dshArgv, waitFor } from './spawnDsh.js';

const hasTmux = spawnSync('tmux', ['-V']).status === 0;
const socket = `dsh-remembered-${process.pid}`;
const dirs: string[] = [];
afterAll(() => {
  spawnSync('tmux', ['-L', socket, 'kill-server']);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

describe.skipIf(!hasTmux)('allowed-always on a terminal', () => {
  it('after `a` to `cd sub && rm -rf victim`, a plain `rm -rf victim` is asked again; `n` keeps the root victim', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-remembered-'));
    const xdg = mkdtempSync(join(tmpdir(), 'dsh-remembered-xdg-'));
    dirs.push(dir, xdg);
    mkdirSync(join(dir, '.git'));
    for (const v of [join(dir, 'victim'), join(dir, 'sub', 'victim')]) {
      mkdirSync(v, { recursive: true });
      writeFileSync(join(v, 'precious.txt'), 'keep me\n');
    }
    const script = join(xdg, 'script.json');
    const bash = (command: string) => ({ toolCalls: [{ toolName: 'bash', input: { command } }] });
    writeFileSync(script, JSON.stringify([bash('cd sub && rm -rf victim'), bash('rm -rf victim'), { text: 'done' }]));
    const args = dshArgv('run', 'clean up', '--model', `scripted:${script}`);
    tmux('new-session', '-d', '-s', 'rm', '-x', '120', '-y', '50', '-c', dir, `env XDG_CONFIG_HOME=${q(xdg)} ${args.map(q).join(' ')}; echo "exit=$?"; sleep 600`);
    const shot = () => tmux('capture-pane', '-p', '-t', 'rm');
    const see = (re: RegExp, what: string) => waitFor(() => re.test(shot()) && shot(), what, 90_000);
    await see(/\? allow bash cd sub && rm -rf victim/, 'the first question');
    tmux('send-keys', '-t', 'rm', 'a');
    await see(/\? allow bash rm -rf victim/, 'the second question (not remembered)');
    expect(existsSync(join(dir, 'sub', 'victim'))).toBe(false);
    tmux('send-keys', '-t', 'rm', 'n');
    await see(/exit=\d+/, 'the exit');
    expect(existsSync(join(dir, 'victim', 'precious.txt'))).toBe(true);
    tmux('kill-session', '-t', 'rm');
  }, 180_000);
});
