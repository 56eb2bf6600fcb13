/**
 * Issue 15.4 across real processes: a turn suspended on an approval in one process is answered
 * and finished in a second one, from the JSONL log alone; a process killed while it asks leaves
 * the approval pending; an `allowed-always` given in one process is remembered in the next.
 * Each process is `sessionProcess.ts` run through tsx; the log is read back with the JSONL reader.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../../src/adapters/log/jsonlLog.js';
import { LogEventSchema, type LogEvent } from '../../../src/protocol/index.js';
import { testEnv, tsxLoader, waitFor } from '../../cli/spawnDsh.js';

const script = join(import.meta.dirname, 'sessionProcess.ts');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function start(file: string, ...args: string[]) {
  const child = spawn(process.execPath, ['--import', tsxLoader, script, file, ...args], { env: testEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; lines: Array<Record<string, unknown>>; err: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, lines: lines(out), err })),
  );
  return { child, done, lines: () => lines(out) };
}
const lines = (out: string) =>
  out
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function events(file: string): Promise<LogEvent[]> {
  return (await readJsonlLog(file)).events;
}

/** One valid session: seq 1..n, schema-valid, every tool/call answered exactly once, every turn and step closed. */
function expectValidSession(all: readonly LogEvent[]) {
  all.forEach((e, i) => {
    expect(e.seq).toBe(i + 1);
    LogEventSchema.parse(e);
  });
  for (const c of all) {
    if (c.type !== 'tool/call') continue;
    expect(all.filter((e) => e.type === 'tool/result' && e.sourceEventSeqs.includes(c.seq)), `results of ${c.callId}`).toHaveLength(1);
  }
  const count = (t: string) => all.filter((e) => e.type === t).length;
  expect(count('turn/start')).toBe(count('turn/end'));
  expect(count('step/start')).toBe(count('step/end'));
}

const resultCodes = (all: readonly LogEvent[]) =>
  all.flatMap((e) => (e.type === 'tool/result' ? [`${e.callId}:${e.result.isError ? e.result.error?.code : 'ok'}`] : []));

function session() {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-suspend-'));
  dirs.push(dir);
  return { file: join(dir, 'session.jsonl'), ran: () => readFileSync(join(dir, 'ran.txt'), 'utf8').trim().split('\n') };
}

describe('a suspended approval across processes (issue 15.4)', () => {
  it('is answered and finished in a second process; the log is one valid session', async () => {
    const s = session();
    const a = await start(s.file, 'suspend').done;
    // The first process exits by itself once the turn is suspended (nothing keeps it alive).
    expect(a.code, a.err).toBe(0);
    expect(a.lines.at(-1)).toMatchObject({ outcome: 'suspended', modelRequests: 1 });
    expect(s.ran()).toEqual(['read a']);
    const suspended = await events(s.file);
    expect(suspended.at(-1)).toMatchObject({ type: 'turn/suspended', turnId: 'turn-1', stepIndex: 0, calls: [{ callId: 'c1' }] });

    const b = await start(s.file, 'resume', 'allowed-always').done;
    expect(b.code, b.err).toBe(0);
    expect(b.lines[0]).toMatchObject({ pending: [{ callId: 'c1', toolName: 'run', reason: 'runs a command' }], closed: { calls: 0, steps: 0, turns: 0 } });
    // The model is not asked again for the suspended step: B's model answered steps 1 and 2 only.
    expect(b.lines.at(-1)).toMatchObject({ outcome: 'completed', steps: 3, text: 'built and tested', modelRequests: 2 });
    // c1 was asked once (its question comes back); c3 has other args; c4 repeats c1: remembered.
    expect(b.lines.at(-1)!.asked).toEqual(['c1 run {"cmd":"make"}', 'c3 run {"cmd":"test"}']);
    // Calls before keep their results (c0 ran once, in A); calls after ran as planned, in order.
    expect(s.ran()).toEqual(['read a', 'run make', 'read b', 'run test', 'run make']);

    const all = await events(s.file);
    expectValidSession(all);
    expect(all.slice(0, suspended.length)).toEqual(suspended);
    expect(resultCodes(all)).toEqual(['c0:ok', 'c1:ok', 'c2:ok', 'c3:ok', 'c4:ok']);
    expect(all.filter((e) => e.type === 'turn/start')).toHaveLength(1);
    expect(all.filter((e) => e.type === 'tool/call').map((e) => e.type === 'tool/call' && `${e.callId}@${e.stepIndex}:${e.executionMode}`)).toEqual([
      'c0@0:parallel',
      'c1@0:exclusive',
      'c2@0:parallel',
      'c3@0:exclusive',
      'c4@1:exclusive',
    ]);
    expect(all.filter((e) => e.type === 'tool/approval-answer').map((e) => e.type === 'tool/approval-answer' && `${e.callId}:${e.answer}`)).toEqual([
      'c1:allowed-always',
      'c3:allowed-always',
      'c4:remembered',
    ]);
    expect(all.find((e) => e.type === 'step/end' && e.stepIndex === 0)).toMatchObject({ finishReason: 'tool-calls', toolCalls: 4 });
    expect(all.at(-1)).toMatchObject({ type: 'turn/end', turnId: 'turn-1', outcome: 'completed', steps: 3 });

    // A third process: the allowed-always answered in the second is remembered from the log.
    const c = await start(s.file, 'turn').done;
    expect(c.code, c.err).toBe(0);
    expect(c.lines.at(-1)).toMatchObject({ outcome: 'completed', asked: [] });
    const last = await events(s.file);
    expectValidSession(last);
    expect(last.filter((e) => e.type === 'tool/approval-answer').at(-1)).toMatchObject({ callId: 'c9', answer: 'remembered' });
  }, 120_000);

  it('a process killed while it asks leaves the approval pending; the next one answers it', async () => {
    const s = session();
    expect((await start(s.file, 'suspend').done).code).toBe(0);
    const before = await events(s.file);

    const b = start(s.file, 'hang');
    await waitFor(() => b.lines().some((l) => l.asking === 'c1'), 'the resumed process to ask c1');
    b.child.kill('SIGKILL');
    expect((await b.done).signal).toBe('SIGKILL');
    // Nothing was appended by the killed process: the session still waits on c1.
    expect(await events(s.file)).toEqual(before);

    const c = await start(s.file, 'resume', 'allowed-once').done;
    expect(c.code, c.err).toBe(0);
    expect(c.lines[0]).toMatchObject({ pending: [{ callId: 'c1' }], closed: { calls: 0, steps: 0, turns: 0 } });
    expect(c.lines.at(-1)).toMatchObject({ outcome: 'completed', modelRequests: 2 });
    expect(s.ran()).toEqual(['read a', 'run make', 'read b', 'run test', 'run make']);
    const all = await events(s.file);
    expectValidSession(all);
    expect(resultCodes(all)).toEqual(['c0:ok', 'c1:ok', 'c2:ok', 'c3:ok', 'c4:ok']);
  }, 120_000);
});
