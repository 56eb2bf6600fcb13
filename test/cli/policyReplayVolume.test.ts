// SPEC §10.9: a log to replay is bounded input. `dsh policy replay` streams a log of a million
// events in a heap far smaller than the log (the run below caps node's heap at 160 MB; reading the
// whole log into memory, as before, needs several times that), names each bad line by number and
// goes on, and a forged event (a tool name the schema refuses) does not end the replay.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { dshArgv, testEnv, type DshRun } from './spawnDsh.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const PAIRS = 500_000; // a tool/call and its tool/result each: a million events

/** Writes the log: most calls never reached the policies (UNKNOWN_TOOL); two did; three lines are bad. */
async function writeLog(file: string): Promise<void> {
  const out = createWriteStream(file);
  let seq = 0;
  let pending = '';
  const line = (s: string) => {
    pending += `${s}\n`;
    if (pending.length > 1 << 20) {
      const ok = out.write(pending);
      pending = '';
      return ok;
    }
    return true;
  };
  const ev = (o: Record<string, unknown>) => line(JSON.stringify({ ...o, seq: ++seq, time: 1_796_276_398_000 + seq }));
  ev({ type: 'session/model', model: { spec: 'embedded' } });
  ev({ type: 'turn/start', turnId: 't1', input: 'go' });
  ev({ type: 'step/start', turnId: 't1', stepIndex: 0 });
  const call = (i: number, toolName: string, input: unknown, result: Record<string, unknown>) => {
    ev({ type: 'tool/call', turnId: 't1', stepIndex: 0, callId: `c${i}`, toolName, input: JSON.stringify(input), index: 0, executionMode: 'parallel' });
    return ev({ type: 'tool/result', turnId: 't1', stepIndex: 0, callId: `c${i}`, toolName, sourceEventSeqs: [seq], result: { callId: `c${i}`, toolName, metadata: {}, ...result } });
  };
  call(0, 'write', { path: 'a.txt', content: 'x' }, { isError: false, content: 'wrote a.txt' });
  for (let i = 1; i < PAIRS; i++) {
    if (i === 1000) line('this line is not JSON');
    if (i === 2000) line(JSON.stringify({ type: 'tool/call', turnId: 't1', stepIndex: 0, callId: 'forged', toolName: 42, input: '{}', index: 0, executionMode: 'parallel', seq: seq + 1, time: 1 }));
    const ok = call(i, 'nosuchtool', { path: `f${i}` }, { isError: true, content: 'UNKNOWN_TOOL: no tool nosuchtool', error: { name: 'UnknownToolError', code: 'UNKNOWN_TOOL', message: 'no tool nosuchtool' } });
    if (!ok) await once(out, 'drain');
  }
  call(PAIRS, 'read', { path: 'README.md' }, { isError: false, content: '# app' });
  out.end(pending);
  await once(out, 'close');
}

function run(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<DshRun> {
  const [node, ...rest] = dshArgv(...args);
  const child = spawn(node!, ['--max-old-space-size=160', ...rest], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, out, err })));
}

describe('dsh policy replay under volume', () => {
  it('a million events in a 160 MB heap; bad lines named by number and skipped; the calls that reached the policies compared', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-replay-volume-'));
    const xdg = mkdtempSync(join(tmpdir(), 'dsh-xdg-'));
    dirs.push(dir, xdg);
    mkdirSync(join(dir, '.git'));
    const file = join(dir, 'big.jsonl');
    await writeLog(file);
    const r = await run(dir, ['policy', 'replay', file, '--json'], testEnv({ XDG_CONFIG_HOME: xdg }));
    expect(r.signal, r.err.slice(-2000)).toBeNull();
    // The write was allowed then (no question logged); dsh run's default policy asks before changes now.
    const report = JSON.parse(r.out.trim().split('\n').at(-1)!) as { calls: number; skipped: number; unchanged: number; transitions: Record<string, number>; badLines: number; failing: number };
    expect(report.badLines, r.err.slice(0, 3000)).toBe(2);
    expect(report.calls).toBe(2);
    expect(report.unchanged).toBe(1);
    expect(report.transitions).toEqual({ 'allow → ask': 1 });
    // Every nosuchtool call: not compared (it never reached the policies), the forged one's result too.
    expect(report.skipped).toBe(PAIRS - 1);
    const bad = r.err.split('\n').filter((l) => l.includes('skipped'));
    expect(bad).toEqual([
      expect.stringMatching(/big\.jsonl:2004: MALFORMED_LINE: .*; skipped$/),
      expect.stringMatching(/big\.jsonl:4005: INVALID_EVENT: .*toolName.*; skipped$/),
    ]);
    // A call that ran then and would be asked about now is a change, not one --fail-on's default fails on.
    expect(report.failing).toBe(0);
    expect(r.code).toBe(0);
  }, 600_000);
});
