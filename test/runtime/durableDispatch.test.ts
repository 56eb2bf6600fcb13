/**
 * Issue 11 item 5: no tool body starts before its `tool/call` is durable. With a JSONL log the
 * body itself reads the file from disk; with a log port that records when it was made durable,
 * the order is checked exactly; and a process SIGKILLed while a body runs leaves the call on disk,
 * where resuming closes it as INTERRUPTED.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openJsonlSessionLog, readJsonlLog } from '../../src/adapters/log/jsonlLog.js';
import { scriptedModel } from '../../src/adapters/model/scriptedModel.js';
import { ErrorCode, type LogEvent } from '../../src/protocol/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { createMemoryLog, type LogSink } from '../../src/runtime/log/sessionLog.js';
import { closeOpenWork } from '../../src/runtime/openWork.js';
import { tempDir } from '../adapters/workspaceFixture.js';

/** The `tool/call` events of a JSONL log file as it is on disk now (a torn tail is ignored). */
async function callsOnDisk(path: string): Promise<string[]> {
  const { events } = await readJsonlLog(path);
  return events.flatMap((e) => (e.type === 'tool/call' ? [e.callId] : []));
}

describe('a tool body starts only once its tool/call is durable', () => {
  it('JSONL log: every body, in a parallel group, a streamed exclusive call and runCall, finds its own tool/call in the file', async () => {
    const path = join(await tempDir('dsh-durable-'), 'session.jsonl');
    const { log, sink } = await openJsonlSessionLog(path);
    const seenOnDisk: Record<string, string[]> = {};
    const probe = (name: string, safe: boolean) =>
      defineTool({
        name,
        description: 'records which tool/calls are on disk when its body starts',
        input: z.object({ n: z.number() }),
        isConcurrencySafe: () => safe,
        execute: async (_args, exec) => {
          seenOnDisk[exec.callId] = await callsOnDisk(path);
          return 'ok';
        },
      });
    const rt = createRuntime({ tools: [probe('read', true), probe('bash', false)], log });
    const model = scriptedModel([
      { toolCalls: [0, 1, 2, 3].map((n) => ({ toolName: 'read', input: { n } })) },
      { toolCalls: [{ toolName: 'bash', input: { n: 4 } }] },
      { text: 'done' },
    ]);
    const { outcome } = await rt.startTurn({ model, input: 'go' }).done;
    expect(outcome).toBe('completed');
    const lone = await rt.runCall({ callId: 'lone', toolName: 'bash', input: { n: 5 } }).result;
    expect(lone.isError).toBe(false);
    await sink.close();

    const callIds = log.events().flatMap((e) => (e.type === 'tool/call' ? [e.callId] : []));
    expect(callIds).toHaveLength(6);
    expect(Object.keys(seenOnDisk).sort()).toEqual([...callIds].sort());
    for (const id of callIds) expect(seenOnDisk[id], `body of ${id}`).toContain(id);
  });

  it('exactly: the body waits for the log port, an abort meanwhile means no body, a failing log runs no body', async () => {
    const pending: Array<{ seq: number; resolve: () => void; reject: (e: Error) => void }> = [];
    let durable = 0;
    let broken = false;
    const sink: LogSink = {
      write: () => undefined,
      whenDurable: (seq) => {
        if (broken) throw new Error('sink broken');
        return seq <= durable ? undefined : new Promise((resolve, reject) => pending.push({ seq, resolve, reject }));
      },
    };
    const log = createMemoryLog({ sink });
    const started: string[] = [];
    const tool = defineTool({
      name: 'bash',
      description: 'side effect',
      input: z.object({}),
      execute: async (_a, exec) => {
        started.push(exec.callId);
        return 'ran';
      },
    });
    const rt = createRuntime({ tools: [tool], log });
    const settle = () => new Promise((r) => setTimeout(r, 5));

    // 1. The body waits until the port says the call's tool/call is durable.
    const a = rt.runCall({ callId: 'a', toolName: 'bash', input: {} });
    await settle();
    expect(started).toEqual([]);
    const callSeq = log.events().find((e) => e.type === 'tool/call' && e.callId === 'a')!.seq;
    expect(pending.map((p) => p.seq)).toEqual([callSeq]);
    durable = callSeq;
    pending.shift()!.resolve();
    expect((await a.result).content).toBe('ran');
    expect(started).toEqual(['a']);

    // 2. Cancelled while waiting: the body never runs.
    const b = rt.runCall({ callId: 'b', toolName: 'bash', input: {} });
    await settle();
    b.cancel('stop');
    pending.shift()!.resolve();
    const rb = await b.result;
    expect(rb.error?.code).toBe(ErrorCode.ABORTED);
    await settle();
    expect(started).toEqual(['a']);

    // 3. The log cannot be made durable: the body does not run, the call says why.
    const c = rt.runCall({ callId: 'c', toolName: 'bash', input: {} });
    await settle();
    pending.shift()!.reject(new Error('disk full'));
    const rc = await c.result;
    expect(rc.error?.code).toBe(ErrorCode.ABORTED_BEFORE_DISPATCH);
    expect(rc.content).toMatch(/could not make this call's tool\/call durable.*disk full/);
    expect(started).toEqual(['a']);
    expect(log.events().filter((e) => e.type === 'tool/result')).toHaveLength(3);

    // 4. The port throws at once instead of waiting: the same answer, never a crash.
    broken = true;
    const rd = await rt.runCall({ callId: 'd', toolName: 'bash', input: {} }).result;
    expect(rd.error?.code).toBe(ErrorCode.ABORTED_BEFORE_DISPATCH);
    expect(rd.content).toMatch(/could not make this call's tool\/call durable.*sink broken/);
    expect(started).toEqual(['a']);
  });

  it('a log port failing with a hostile value: no body, the call says why in visible, bounded text', async () => {
    // No prototype (String() throws), a terminal escape in the message, a toString that throws.
    const unprintable = {
      toString: () => {
        throw new Error('no');
      },
    };
    const failures: unknown[] = [Object.create(null), new Error('disk \u001b]0;owned\u0007full'), unprintable];
    let next = 0;
    const sink: LogSink = { write: () => undefined, whenDurable: () => Promise.reject(failures[next++]) };
    const started: string[] = [];
    const tool = defineTool({
      name: 'bash',
      input: z.object({}),
      execute: (_a, exec) => {
        started.push(exec.callId);
        return 'ran';
      },
    });
    const rt = createRuntime({ tools: [tool], log: createMemoryLog({ sink }) });
    for (const callId of ['x', 'y', 'z']) {
      const r = await rt.runCall({ callId, toolName: 'bash', input: {} }).result;
      expect(r.error?.code, callId).toBe(ErrorCode.ABORTED_BEFORE_DISPATCH);
      expect(r.content).toMatch(/could not make this call's tool\/call durable/);
      expect(r.content).not.toContain('\u001b');
    }
    expect(started).toEqual([]);
  });

  it('the in-memory log is durable at once: a body runs without waiting for a commit', async () => {
    const rt = createRuntime({ tools: [defineTool({ name: 'now', input: z.object({}), execute: () => 'ran' })] });
    expect(rt.log.whenDurable).toBeUndefined();
    expect((await rt.runCall({ callId: 'n', toolName: 'now', input: {} }).result).content).toBe('ran');
  });

  it('SIGKILL while a body runs: the tool/call is on disk, and resuming closes it as INTERRUPTED', async () => {
    const path = join(await tempDir('dsh-durable-kill-'), 'session.jsonl');
    const src = (p: string) => JSON.stringify(fileURLToPath(new URL(`../../src/${p}`, import.meta.url)));
    const script = `
      const { z } = await import('zod');
      const { openJsonlSessionLog } = await import(${src('adapters/log/jsonlLog.ts')});
      const { scriptedModel } = await import(${src('adapters/model/scriptedModel.ts')});
      const { createRuntime } = await import(${src('runtime/createRuntime.ts')});
      const { defineTool } = await import(${src('runtime/defineTool.ts')});
      const { log } = await openJsonlSessionLog(${JSON.stringify(path)});
      const bash = defineTool({
        name: 'bash',
        description: 'a side effect that never ends',
        input: z.object({ cmd: z.string() }),
        execute: () => { process.stdout.write('body started\\n'); return new Promise(() => setInterval(() => {}, 1000)); },
      });
      const rt = createRuntime({ tools: [bash], log });
      rt.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'bash', input: { cmd: 'rm -rf build' } }] }, { text: 'done' }]), input: 'clean' });`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('body started')) resolve();
      });
      child.on('exit', () => reject(new Error(`child exited before the body started: ${stderr}`)));
    });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const onDisk = await readJsonlLog(path);
    const call = onDisk.events.find((e) => e.type === 'tool/call');
    expect(call).toMatchObject({ toolName: 'bash', input: JSON.stringify({ cmd: 'rm -rf build' }) });
    expect(onDisk.events.some((e) => e.type === 'tool/result')).toBe(false);

    const resumed = await openJsonlSessionLog(path);
    expect(closeOpenWork(resumed.log, 'the process was killed')).toMatchObject({ calls: 1 });
    await resumed.sink.close();
    const after = await readJsonlLog(path);
    const result = after.events.find((e): e is Extract<LogEvent, { type: 'tool/result' }> => e.type === 'tool/result');
    expect(result).toMatchObject({ callId: call!.type === 'tool/call' && call!.callId, sourceEventSeqs: [call!.seq], result: { error: { code: ErrorCode.INTERRUPTED } } });
    expect(readFileSync(path, 'utf8').endsWith('\n')).toBe(true);
  }, 30_000);
});
