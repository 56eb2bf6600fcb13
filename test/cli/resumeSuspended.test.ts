// Issue 15.4 through the CLI: `dsh run --suspend` suspends the turn on its first question and exits
// 3; `dsh resume ID` (another process) shows the pending approval, asks it, and finishes the same
// turn without asking the model again for that step. Real processes, no terminal.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/adapters/log/jsonlLog.js';
import { LogEventSchema } from '../../src/protocol/index.js';
import { dsh } from './spawnDsh.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-suspend-cli-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'a.txt'), 'alpha\n');
  return dir;
}
const sessionIds = (dir: string) => readdirSync(join(dir, '.dsh', 'sessions')).filter((n) => n.endsWith('.jsonl')).map((n) => n.slice(0, -6));

const HANG = 120_000;

describe('dsh run --suspend / dsh resume (issue 15.4)', () => {
  it('suspends on the question (exit 3); resume shows it, asks it (--allow answers), and finishes the same turn', async () => {
    const dir = workspace();
    const script = join(dir, 'script.json');
    // One response only: a second request for the suspended step would fail the turn.
    writeFileSync(script, JSON.stringify([{ toolCalls: [{ toolName: 'read', input: { path: 'a.txt' } }, { toolName: 'bash', input: { command: 'echo made > made.txt' } }] }]));
    const run = await dsh(dir, ['run', 'build it', '--suspend', '--model', `scripted:${script}`]);
    expect(run.code, run.err).toBe(3);
    expect(run.err).toMatch(/turn-1 is suspended on an approval; answer it with: npx dsh resume /);
    expect(existsSync(join(dir, 'made.txt'))).toBe(false);
    const [id] = sessionIds(dir);
    const file = join(dir, '.dsh', 'sessions', `${id}.jsonl`);
    const suspended = (await readJsonlLog(file)).events;
    expect(suspended.at(-1)).toMatchObject({ type: 'turn/suspended', turnId: 'turn-1' });
    const listed = await dsh(dir, ['sessions']);
    expect(listed.out).toMatch(new RegExp(`${id}.*suspended`));

    writeFileSync(script, JSON.stringify([{ text: 'made it' }]));
    const resumed = await dsh(dir, ['resume', id!, '--allow', 'bash', '--model', `scripted:${script}`]);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.err).toMatch(/turn-1 waits for approval: bash .*echo made > made\.txt.*: the model wants to run a command/);
    expect(resumed.err).not.toMatch(/INTERRUPTED/);
    expect(readFileSync(join(dir, 'made.txt'), 'utf8')).toBe('made\n');
    const { events } = await readJsonlLog(file);
    events.forEach((e, i) => {
      expect(e.seq).toBe(i + 1);
      LogEventSchema.parse(e);
    });
    for (const c of events.filter((e) => e.type === 'tool/call')) {
      expect(events.filter((e) => e.type === 'tool/result' && e.sourceEventSeqs.includes(c.seq))).toHaveLength(1);
    }
    expect(events.filter((e) => e.type === 'turn/start')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'tool/approval-answer')).toMatchObject([{ answer: 'allowed-once' }]);
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', turnId: 'turn-1', outcome: 'completed', steps: 2 });
  }, HANG);

  it('without a terminal and without --allow the pending question is asked and denied; the turn still finishes', async () => {
    const dir = workspace();
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify([{ toolCalls: [{ toolName: 'bash', input: { command: 'echo no > no.txt' } }] }, { text: 'ok, not run' }]));
    expect((await dsh(dir, ['run', 'x', '--suspend', '--model', `scripted:${script}`])).code).toBe(3);
    const resumed = await dsh(dir, ['resume', sessionIds(dir)[0]!, '--model', `scripted:${script}`]);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.err).toMatch(/waits for approval: bash/);
    expect(resumed.err).toMatch(/denied bash .*no terminal to ask/);
    expect(existsSync(join(dir, 'no.txt'))).toBe(false);
    const { events } = await readJsonlLog(join(dir, '.dsh', 'sessions', `${sessionIds(dir)[0]}.jsonl`));
    expect(events.find((e) => e.type === 'tool/result')).toMatchObject({ result: { error: { code: 'APPROVAL_DENIED' } } });
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', outcome: 'completed' });
  }, HANG);
});
