// `dsh run` on a real terminal (a tmux pane): the live view shows a call's row change stage, and
// an approval is answered with one keystroke. Needs tmux (.ci/run installs it).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/adapters/log/jsonlLog.js';
import { dshArgv, waitFor } from './spawnDsh.js';
import { tmuxCommand } from './tmuxPane.js';

const hasTmux = spawnSync('tmux', ['-V']).status === 0;
const socket = `dsh-test-${process.pid}`;
const dir = mkdtempSync(join(tmpdir(), 'dsh-tty-'));
afterAll(() => {
  spawnSync('tmux', ['-L', socket, 'kill-server']);
  rmSync(dir, { recursive: true, force: true });
});

const tmux = tmuxCommand(socket);
const screen = () => tmux('capture-pane', '-p', '-t', 'dsh');
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

describe.skipIf(!hasTmux)('dsh run on a terminal', () => {
  it('a row changes stage (awaiting approval → done), y approves the edit, n denies the command; the log validates', async () => {
    writeFileSync(join(dir, 'README.md'), '# app\n');
    const cmd = `${dshArgv('run', '--model', 'embedded', 'look around').map(q).join(' ')}; echo "exit=$?"; sleep 600`;
    tmux('new-session', '-d', '-s', 'dsh', '-x', '120', '-y', '50', '-c', dir, cmd);
    await runOneTurn();
    tmux('kill-session', '-t', 'dsh');
  }, 180_000);

  it('without PROMPT: a REPL, turn after turn in one session; Ctrl-C at a question cancels that turn only; /exit leaves (0)', async () => {
    const repl = mkdtempSync(join(tmpdir(), 'dsh-repl-'));
    writeFileSync(join(repl, 'README.md'), '# app\n');
    const cmd = `${dshArgv('run', '--model', 'embedded', '--allow', 'edit').map(q).join(' ')}; echo "exit=$?"; sleep 600`;
    tmux('new-session', '-d', '-s', 'repl', '-x', '120', '-y', '60', '-c', repl, cmd);
    const shot = () => tmux('capture-pane', '-p', '-t', 'repl');
    const see = (re: RegExp, what: string) => waitFor(() => re.test(shot()) && shot(), what, 90_000);
    await see(/^dsh>\s*$/m, 'the prompt');
    tmux('send-keys', '-t', 'repl', 'first look', 'Enter');
    await see(/bash ls -1 \| head -n 20  awaiting approval/, 'the bash question');
    tmux('send-keys', '-t', 'repl', 'n');
    await see(/turn completed[\s\S]*^dsh>\s*$/m, 'the first turn done, the prompt again');
    tmux('send-keys', '-t', 'repl', 'second look', 'Enter');
    await see(/› second look[\s\S]*bash ls -1 \| head -n 20  awaiting approval/, 'the second bash question');
    tmux('send-keys', '-t', 'repl', 'C-c');
    await see(/turn cancelled[\s\S]*^dsh>\s*$/m, 'the second turn cancelled, the prompt again');
    tmux('send-keys', '-t', 'repl', '/exit', 'Enter');
    await see(/exit=0/, 'exit 0');
    const [name] = readdirSync(join(repl, '.dsh', 'sessions'));
    const { events } = await readJsonlLog(join(repl, '.dsh', 'sessions', name!));
    expect(events.filter((e) => e.type === 'turn/end').map((e) => [(e as { turnId: string }).turnId, (e as { outcome: string }).outcome])).toEqual([
      ['turn-1', 'completed'],
      ['turn-2', 'cancelled'],
    ]);
    const calls = events.filter((e) => e.type === 'tool/call').map((e) => e.seq);
    expect(events.flatMap((e) => (e.type === 'tool/result' ? e.sourceEventSeqs : [])).sort((a, b) => a - b)).toEqual(calls);
    rmSync(repl, { recursive: true, force: true });
  }, 180_000);

  it('typing while a turn runs steers it (user/steer before the next request); a steer during the last step becomes a follow-up turn (issue 15.3)', async () => {
    const repl = mkdtempSync(join(tmpdir(), 'dsh-steer-'));
    writeFileSync(join(repl, 'README.md'), '# app\n');
    // Slow answers (about 10 s each) leave time to type while they stream, however loaded the machine.
    const slow = (words: string[]) => [...words, ...Array.from({ length: 16 }, () => '…')].map((w, i) => (i ? ` ${w}` : w));
    const script = [
      { text: slow(['Working', 'on', 'it', 'one', 'word', 'at', 'a', 'time', 'so', 'you', 'can', 'type.']), chunkDelayMs: 400, toolCalls: [{ toolName: 'read', input: { path: 'README.md' } }] },
      { text: 'Checked c as well.' },
      { text: slow(['Final', 'answer', 'coming', 'in', 'slowly', 'word', 'by', 'word', 'now.']), chunkDelayMs: 400 },
      { text: 'Follow-up answered.' },
    ];
    writeFileSync(join(repl, 'script.json'), JSON.stringify(script));
    const cmd = `${dshArgv('run', '--model', 'scripted:script.json').map(q).join(' ')}; echo "exit=$?"; sleep 600`;
    tmux('new-session', '-d', '-s', 'steer', '-x', '120', '-y', '60', '-c', repl, cmd);
    const shot = () => tmux('capture-pane', '-p', '-t', 'steer');
    const see = (re: RegExp, what: string) => waitFor(() => re.test(shot()) && shot(), what, 90_000);
    await see(/^dsh>\s*$/m, 'the prompt');
    tmux('send-keys', '-t', 'steer', 'first', 'Enter');
    await see(/Working on/, 'the first answer streaming');
    tmux('send-keys', '-t', 'steer', 'also check c');
    await see(/^steer› also check c$/m, 'the typed line');
    tmux('send-keys', '-t', 'steer', 'Enter');
    await see(/› also check c {2}\(steering\)[\s\S]*Checked c as well\.[\s\S]*turn completed[\s\S]*^dsh>\s*$/m, 'the steer delivered, the turn done');
    tmux('send-keys', '-t', 'steer', 'second', 'Enter');
    await see(/Final answer/, 'the second answer streaming');
    tmux('send-keys', '-t', 'steer', 'one more', 'Enter');
    await see(/› one more[\s\S]*Follow-up answered\.[\s\S]*turn completed[\s\S]*^dsh>\s*$/m, 'the follow-up turn done');
    tmux('send-keys', '-t', 'steer', '/exit', 'Enter');
    await see(/exit=0/, 'exit 0');
    const [name] = readdirSync(join(repl, '.dsh', 'sessions'));
    const { events } = await readJsonlLog(join(repl, '.dsh', 'sessions', name!));
    const brief = events.flatMap((e) =>
      e.type === 'user/steer' ? [`steer@${e.stepIndex}:${e.text}`] : e.type === 'turn/start' ? [`start:${e.input}${e.followUp ? `(${e.followUp.kind} after ${e.followUp.after})` : ''}`] : e.type === 'step/end' || e.type === 'step/start' || e.type === 'turn/end' ? [`${e.type}`] : [],
    );
    expect(brief).toEqual([
      'start:first',
      'step/start',
      'step/end',
      'steer@1:also check c',
      'step/start',
      'step/end',
      'turn/end',
      'start:second',
      'step/start',
      'step/end',
      'turn/end',
      'start:one more(late-steer after turn-2)',
      'step/start',
      'step/end',
      'turn/end',
    ]);
    tmux('kill-session', '-t', 'steer');
    rmSync(repl, { recursive: true, force: true });
  }, 180_000);
});

async function runOneTurn() {
  {
    const frames: string[] = [];
    const see = (re: RegExp, what: string) =>
      waitFor(() => {
        const s = screen();
        frames.push(s);
        return re.test(s) && s;
      }, what, 90_000);
    await see(/^⠋|^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] edit README\.md  awaiting approval  \d/m, 'the edit row awaiting approval');
    await see(/\[y\] allow once  \[a\] allow always  \[n\] deny/, 'the question');
    tmux('send-keys', '-t', 'dsh', 'y');
    await see(/^✓ edit README\.md  done  /m, 'the edit row done');
    await see(/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] bash ls -1 \| head -n 20  awaiting approval/m, 'the bash row awaiting approval');
    tmux('send-keys', '-t', 'dsh', 'n');
    await see(/^✗ bash ls -1 \| head -n 20  APPROVAL_DENIED/m, 'the bash row denied');
    const last = await see(/exit=0/, 'the exit');
    expect(last).toMatch(/turn completed/);
    expect(last).toMatch(/Done: .*the change went through/s);
    // The stages the edit row showed, in order, across frames.
    const stages = frames.flatMap((f) => /^. edit README\.md  (\S+(?: \S+)?)  /m.exec(f)?.[1] ?? []).filter((s, i, a) => s !== a[i - 1]);
    // (A frame may or may not catch the short stages, before the question or after it, depending
    // on the machine's speed; the order is fixed, and the question and the end are always seen.)
    expect(stages).toContain('awaiting approval');
    expect(stages.at(-1)).toBe('done');
    const order = ['queued', 'validating', 'pre-execute', 'awaiting approval', 'guard', 'running', 'post-execute', 'finalizing', 'done'];
    expect(stages.filter((s) => !order.includes(s))).toEqual([]);
    expect(stages.map((s) => order.indexOf(s))).toEqual(stages.map((s) => order.indexOf(s)).sort((a, b) => a - b));
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('# app (reviewed by dsh)\n');
    const [name] = readdirSync(join(dir, '.dsh', 'sessions'));
    const { events } = await readJsonlLog(join(dir, '.dsh', 'sessions', name!));
    expect(events.filter((e) => e.type === 'tool/approval-answer').map((e) => (e as { answer: string }).answer)).toEqual(['allowed-once', 'denied']);
    expect(existsSync(join(dir, '.dsh', '.gitignore'))).toBe(true);
  }
}
