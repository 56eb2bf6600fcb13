// Issue 15.4 on a real terminal (a tmux pane): `dsh resume ID` of a session suspended by
// `dsh run --suspend` shows the pending approval and asks it with one keystroke; `y` lets the
// same call run, and the turn finishes. Needs tmux (.ci/run installs it).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/adapters/log/jsonlLog.js';
import { dsh, dshArgv, waitFor } from './spawnDsh.js';

const hasTmux = spawnSync('tmux', ['-V']).status === 0;
const socket = `dsh-suspend-test-${process.pid}`;
const dir = mkdtempSync(join(tmpdir(), 'dsh-suspend-tty-'));
afterAll(() => {
  spawnSync('tmux', ['-L', socket, 'kill-server']);
  rmSync(dir, { recursive: true, force: true });
});
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

describe.skipIf(!hasTmux)('dsh resume of a suspended approval on a terminal', () => {
  it('shows the pending question, y answers it, the same call runs, the turn completes, then the REPL', async () => {
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify([{ toolCalls: [{ toolName: 'bash', input: { command: 'echo yes > yes.txt' } }] }]));
    expect((await dsh(dir, ['run', 'do it', '--suspend', '--model', `scripted:${script}`])).code).toBe(3);
    const [name] = readdirSync(join(dir, '.dsh', 'sessions'));
    const id = name!.slice(0, -'.jsonl'.length);
    writeFileSync(script, JSON.stringify([{ text: 'did it' }]));
    const cmd = `${dshArgv('resume', id, '--model', `scripted:${script}`).map(q).join(' ')}; echo "exit=$?"; sleep 600`;
    tmux('new-session', '-d', '-s', 'resume', '-x', '120', '-y', '50', '-c', dir, cmd);
    const shot = () => tmux('capture-pane', '-p', '-t', 'resume');
    const see = (re: RegExp, what: string) => waitFor(() => re.test(shot()) && shot(), what, 90_000);
    await see(/turn-1 waits for approval: bash echo yes > yes\.txt/, 'the pending approval shown');
    await see(/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] bash echo yes > yes\.txt  awaiting approval/m, 'the bash row awaiting approval');
    await see(/\[y\] allow once  \[a\] allow always  \[n\] deny/, 'the question');
    tmux('send-keys', '-t', 'resume', 'y');
    // Without PROMPT on a terminal, the REPL follows the resumed turn.
    await see(/turn completed[\s\S]*^dsh>\s*$/m, 'the turn completed, then the REPL prompt');
    tmux('send-keys', '-t', 'resume', '/exit', 'Enter');
    await see(/exit=0/, 'exit 0');
    expect(readFileSync(join(dir, 'yes.txt'), 'utf8')).toBe('yes\n');
    const { events } = await readJsonlLog(join(dir, '.dsh', 'sessions', name!));
    expect(events.filter((e) => e.type === 'tool/approval-answer').map((e) => (e as { answer: string }).answer)).toEqual(['allowed-once']);
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', turnId: 'turn-1', outcome: 'completed' });
  }, 180_000);
});
