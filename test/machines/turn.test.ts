import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { contextOverflowError, rateLimitError, scriptedModel } from '../../src/adapters/model/index.js';
import { ErrorCode, LogEventSchema, type LogEvent } from '../../src/protocol/index.js';
import { ManualClock, sleep } from '../../src/runtime/clock.js';
import { createRuntime, type RuntimeOptions } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { isStepSnapshot } from '../../src/runtime/inspection/inspectionEvents.js';

function tools(clock: ManualClock, trace: string[] = []) {
  const read = defineTool({
    name: 'read',
    description: 'read a file',
    input: z.object({ path: z.string(), ms: z.number().default(0) }),
    isConcurrencySafe: () => true,
    execute: async (a, exec) => {
      trace.push(`start ${a.path}@${clock.now()}`);
      await sleep(clock, a.ms, exec.signal);
      trace.push(`end ${a.path}@${clock.now()}`);
      return `contents of ${a.path}`;
    },
  });
  const write = defineTool({
    name: 'write',
    input: z.object({ path: z.string(), text: z.string() }),
    execute: async (a) => {
      trace.push(`write ${a.path}@${clock.now()}`);
      return `wrote ${a.text.length} chars to ${a.path}`;
    },
  });
  return [read, write];
}

/** Drives a fake clock until the turn settles. */
async function settle<T>(clock: ManualClock, done: Promise<T>): Promise<T> {
  let finished = false;
  void done.then(() => (finished = true), () => (finished = true));
  for (let i = 0; !finished && i < 10_000; i++) {
    // Let streams and promise chains run to quiescence before fake time moves.
    await new Promise((r) => setImmediate(r));
    if (finished) break;
    if (!(await clock.runNext())) await clock.advance(1);
  }
  return done;
}

function setup(extra: Partial<RuntimeOptions> = {}) {
  const clock = new ManualClock();
  const trace: string[] = [];
  const rt = createRuntime({ tools: tools(clock, trace), clock, ...extra });
  return { clock, trace, rt };
}

const types = (events: readonly LogEvent[]) => events.map((e) => e.type);

describe('turn', () => {
  it('runs two steps (4 parallel reads + 1 exclusive write, then an answer) with the event sequence of SPEC §1', async () => {
    const { clock, trace, rt } = setup();
    const model = scriptedModel([
      {
        text: ['Reading ', 'the files.'],
        toolCalls: [
          { toolName: 'read', input: { path: 'a', ms: 40 } },
          { toolName: 'read', input: { path: 'b', ms: 10 } },
          { toolName: 'read', input: { path: 'c', ms: 30 } },
          { toolName: 'read', input: { path: 'd', ms: 20 } },
          { toolName: 'write', input: { path: 'out', text: 'merged' } },
        ],
      },
      { text: 'All done.' },
    ], { clock });
    const turn = rt.startTurn({ model, input: 'read the files and merge them' });
    const out = await settle(clock, turn.done);
    expect(out).toMatchObject({ outcome: 'completed', steps: 2 });
    const events = rt.log.events();
    for (const e of events) LogEventSchema.parse(e);
    expect(types(events)).toEqual([
      'turn/start',
      'step/start', 'llm/stream',
      'tool/call', 'tool/call', 'tool/call', 'tool/call', 'tool/call',
      'tool/result', 'tool/result', 'tool/result', 'tool/result', 'tool/result',
      'step/end',
      'step/start', 'llm/stream', 'step/end',
      'turn/end',
    ]);
    // one coalesced llm/stream event per contiguous run of text, not one per delta
    expect(events.filter((e) => e.type === 'llm/stream').map((e) => e.type === 'llm/stream' && e.text)).toEqual(['Reading the files.', 'All done.']);
    // reads overlapped; the write started only after every read ended
    expect(trace.slice(0, 4)).toEqual(['start a@0', 'start b@0', 'start c@0', 'start d@0']);
    expect(trace.at(-1)).toBe('write out@40');
    // the second request's prompt carries the results in call order
    const second = model.calls[1]!.prompt;
    const toolMessages = second.filter((m) => m.role === 'tool');
    const parts = toolMessages.flatMap((m) => m.content).filter((p) => p.type === 'tool-result');
    expect(parts.map((p) => p.type === 'tool-result' && p.output)).toEqual([
      { type: 'text', value: 'contents of a' },
      { type: 'text', value: 'contents of b' },
      { type: 'text', value: 'contents of c' },
      { type: 'text', value: 'contents of d' },
      { type: 'text', value: 'wrote 6 chars to out' },
    ]);
    // the model was told about the tools, with JSON schemas
    expect(model.calls[0]!.options.tools?.map((t) => t.name)).toEqual(['read', 'write']);
  });

  it('streaming dispatch: a safe call starts while the model is still streaming; an exclusive one waits for the finish', async () => {
    const { clock, trace, rt } = setup();
    const model = scriptedModel([
      {
        toolCalls: [
          { toolName: 'read', input: { path: 'early', ms: 5 } },
          { toolName: 'write', input: { path: 'x', text: 'y' } },
        ],
      },
      { text: 'ok' },
    ], { clock, chunkDelayMs: 100 });
    const turn = rt.startTurn({ model, input: 'go' });
    await settle(clock, turn.done);
    const startEarly = Number(trace.find((t) => t.startsWith('start early'))!.split('@')[1]);
    const write = Number(trace.find((t) => t.startsWith('write x'))!.split('@')[1]);
    const step0End = rt.log.events().find((e) => e.type === 'step/end')!;
    // the read began before the model's finish part arrived (several chunk delays later)
    expect(startEarly).toBeLessThan(write);
    expect(write).toBeGreaterThanOrEqual(startEarly + 100);
    expect(step0End.type === 'step/end' && step0End.finishReason).toBe('tool-calls');
  });

  it('a response cut off by the output-token limit: unstarted calls get TRUNCATED_CALL, a started safe call keeps its result', async () => {
    const { clock, rt } = setup();
    const model = scriptedModel([
      {
        toolCalls: [
          { toolName: 'read', input: { path: 'a', ms: 0 } },
          { toolName: 'write', input: { path: 'x', text: 'cut' } },
          { toolName: 'read', input: { path: 'b', ms: 0 } },
        ],
        finishReason: 'length',
      },
      { text: 'retrying' },
    ], { clock, chunkDelayMs: 10 });
    const out = await settle(clock, rt.startTurn({ model, input: 'go' }).done);
    expect(out.outcome).toBe('completed');
    const results = rt.log.events().filter((e) => e.type === 'tool/result');
    expect(results.map((e) => e.type === 'tool/result' && (e.result.error?.code ?? 'ok'))).toEqual(['ok', ErrorCode.TRUNCATED_CALL, ErrorCode.TRUNCATED_CALL]);
    expect(results[1]!.type === 'tool/result' && results[1]!.result.content).toMatch(/re-issue/i);
  });

  it('stops at maxSteps with outcome max-steps, closing every step it opened', async () => {
    const { clock, rt } = setup();
    const again = { toolCalls: [{ toolName: 'read', input: { path: 'loop' } }] };
    const out = await settle(clock, rt.startTurn({ model: scriptedModel([again, again, again], { clock }), input: 'go', maxSteps: 2 }).done);
    expect(out).toMatchObject({ outcome: 'max-steps', steps: 2 });
    const t = types(rt.log.events());
    expect(t.filter((x) => x === 'step/start')).toHaveLength(2);
    expect(t.filter((x) => x === 'step/end')).toHaveLength(2);
    expect(t.at(-1)).toBe('turn/end');
  });

  it('cancel mid-turn: running calls end ABORTED, unstarted ones ABORTED_BEFORE_DISPATCH, one turn/end cancelled', async () => {
    const { clock, rt } = setup({ concurrency: 1 });
    const model = scriptedModel([
      { toolCalls: [{ toolName: 'read', input: { path: 'slow', ms: 1000 } }, { toolName: 'read', input: { path: 'next', ms: 1 } }] },
      { text: 'never' },
    ], { clock });
    const turn = rt.startTurn({ model, input: 'go' });
    clock.setTimeout(() => turn.cancel('user pressed stop'), 50);
    const out = await settle(clock, turn.done);
    expect(out.outcome).toBe('cancelled');
    const results = rt.log.events().filter((e) => e.type === 'tool/result');
    expect(results.map((e) => e.type === 'tool/result' && e.result.error?.code)).toEqual([ErrorCode.ABORTED, ErrorCode.ABORTED_BEFORE_DISPATCH]);
    const end = rt.log.events().at(-1)!;
    expect(end.type === 'turn/end' && end.outcome).toBe('cancelled');
    expect(types(rt.log.events()).filter((x) => x === 'turn/end')).toHaveLength(1);
  });

  it("a step cancelled while its calls run ends cancelled, in its step/end and in its output (what an inspector sees)", async () => {
    const outputs: unknown[] = [];
    const { clock, rt } = setup({
      inspect: (ev) => {
        if (ev.type === '@xstate.snapshot' && isStepSnapshot(ev.snapshot) && ev.snapshot.status === 'done') outputs.push(ev.snapshot.output);
      },
    });
    const model = scriptedModel([{ toolCalls: [{ toolName: 'read', input: { path: 'slow', ms: 1000 } }] }, { text: 'never' }], { clock });
    const turn = rt.startTurn({ model, input: 'go' });
    clock.setTimeout(() => turn.cancel('user pressed stop'), 50);
    expect((await settle(clock, turn.done)).outcome).toBe('cancelled');
    expect(rt.log.events().filter((e) => e.type === 'step/end')).toMatchObject([{ finishReason: 'cancelled', toolCalls: 1 }]);
    expect(outputs).toMatchObject([{ finishReason: 'cancelled', cancelled: true, toolCalls: 1 }]);
  });

  it('a step that only answers with text ends with no call and no result, in its output (what an inspector sees)', async () => {
    const outputs: unknown[] = [];
    const { clock, rt } = setup({
      inspect: (ev) => {
        if (ev.type === '@xstate.snapshot' && isStepSnapshot(ev.snapshot) && ev.snapshot.status === 'done') outputs.push(ev.snapshot.output);
      },
    });
    await settle(clock, rt.startTurn({ model: scriptedModel([{ text: 'hello' }], { clock }), input: 'go' }).done);
    expect(outputs).toEqual([{ toolCalls: 0, finishReason: 'stop', cancelled: false, error: undefined, results: [] }]);
  });

  it('an already-aborted signal ends the turn cancelled without a model request', async () => {
    const { clock, rt } = setup();
    const model = scriptedModel([{ text: 'never' }], { clock });
    const ac = new AbortController();
    ac.abort();
    const out = await settle(clock, rt.startTurn({ model, input: 'go', signal: ac.signal }).done);
    expect(out.outcome).toBe('cancelled');
    expect(model.calls).toHaveLength(0);
    expect(types(rt.log.events())).toEqual(['turn/start', 'turn/end']);
  });

  it('an off-the-shelf AI SDK model (MockLanguageModelV3) drives a turn', async () => {
    const { clock, rt } = setup();
    let n = 0;
    const model = new MockLanguageModelV3({
      doStream: async () => {
        const first = n++ === 0;
        const parts = first
          ? [
              { type: 'tool-call' as const, toolCallId: 'm1', toolName: 'read', input: '{"path":"readme"}' },
              { type: 'finish' as const, finishReason: { unified: 'tool-calls' as const, raw: undefined }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } } },
            ]
          : [
              { type: 'text-delta' as const, id: 't', delta: 'Summary.' },
              { type: 'finish' as const, finishReason: { unified: 'stop' as const, raw: undefined }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } } },
            ];
        return { stream: new ReadableStream({ start: (c) => { for (const p of parts) c.enqueue(p); c.close(); } }) };
      },
    });
    const out = await settle(clock, rt.startTurn({ model, input: 'summarise' }).done);
    expect(out).toMatchObject({ outcome: 'completed', steps: 2 });
    const result = rt.log.events().find((e) => e.type === 'tool/result');
    expect(result?.type === 'tool/result' && result.result.content).toBe('contents of readme');
  });
});

describe('model-request failures', () => {
  it('429 then success: one agent/request-error (retry), backoff on the injected clock, then the answer', async () => {
    const { clock, rt } = setup();
    const model = scriptedModel([{ error: rateLimitError() }, { text: 'hello' }], { clock });
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done);
    expect(out.outcome).toBe('completed');
    const errors = rt.log.events().filter((e) => e.type === 'agent/request-error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ kind: 'retryable', status: 429, action: 'retry', attempt: 1 });
    expect(types(rt.log.events())).toEqual(['turn/start', 'step/start', 'agent/request-error', 'llm/stream', 'step/end', 'turn/end']);
    expect(model.calls).toHaveLength(2);
  });

  it('a fatal error fails the turn with a clear error and closes the step', async () => {
    const { clock, rt } = setup();
    const model = scriptedModel([{ error: new Error('invalid api key') }], { clock });
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done);
    expect(out.outcome).toBe('failed');
    expect(out.error).toMatch(/invalid api key/);
    expect(types(rt.log.events())).toEqual(['turn/start', 'step/start', 'agent/request-error', 'step/end', 'turn/end']);
  });

  it('context overflow with a compaction that shrinks the prompt is retried once', async () => {
    let compactions = 0;
    const { clock, rt } = setup({
      compact: ({ log, turnId }) => {
        compactions++;
        log.append({ type: 'context/compacted', turnId, strategy: 'test', stubbedSeqs: [], beforeChars: 100, afterChars: 50 });
        return true;
      },
    });
    const model = scriptedModel([{ error: contextOverflowError() }, { text: 'fits now' }], { clock });
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done);
    expect(out.outcome).toBe('completed');
    expect(compactions).toBe(1);
    expect(types(rt.log.events())).toEqual(['turn/start', 'step/start', 'agent/request-error', 'context/compacted', 'llm/stream', 'step/end', 'turn/end']);
    expect(rt.log.events().find((e) => e.type === 'agent/request-error')).toMatchObject({ kind: 'context-overflow', action: 'compact' });
  });

  it('context overflow with a compaction that cannot shrink fails the turn without a loop', async () => {
    const { clock, rt } = setup({ compact: () => false });
    const model = scriptedModel([{ error: contextOverflowError('anthropic') }, { error: contextOverflowError('anthropic') }], { clock });
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done);
    expect(out.outcome).toBe('failed');
    expect(out.error).toMatch(/compaction could not shrink/);
    expect(model.calls).toHaveLength(1);
  });

  it('default compaction stubs older tool results, logs context/compacted, and the retried prompt is smaller', async () => {
    const { clock, rt } = setup();
    const big = { toolName: 'read', input: { path: 'x'.repeat(2000) } };
    const model = scriptedModel([
      { toolCalls: [big] },
      { toolCalls: [{ toolName: 'read', input: { path: 'small' } }] },
      { error: contextOverflowError() },
      { text: 'done' },
    ], { clock });
    const out = await settle(clock, rt.startTurn({ model, input: 'go' }).done);
    expect(out.outcome).toBe('completed');
    const compacted = rt.log.events().find((e) => e.type === 'context/compacted');
    expect(compacted).toBeDefined();
    if (compacted?.type !== 'context/compacted') throw new Error('unreachable');
    expect(compacted.afterChars).toBeLessThan(compacted.beforeChars);
    const firstResultSeq = rt.log.events().find((e) => e.type === 'tool/result')!.seq;
    expect(compacted.stubbedSeqs).toEqual([firstResultSeq]);
    const retried = JSON.stringify(model.calls[3]!.prompt);
    expect(retried).not.toContain('contents of ' + 'x'.repeat(2000));
    expect(retried).toContain('contents of small');
  });

  it('a step that crashes (a throwing compactor) is closed: step/end before turn/end, turn failed', async () => {
    const { clock, rt } = setup({
      compact: () => {
        throw new Error('compactor crashed');
      },
    });
    const model = scriptedModel([{ error: contextOverflowError() }], { clock });
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done);
    expect(out.outcome).toBe('failed');
    expect(out.error).toMatch(/compactor crashed/);
    expect(types(rt.log.events())).toEqual(['turn/start', 'step/start', 'agent/request-error', 'step/end', 'turn/end']);
  });

  it('a step that crashes with a call running: the call is answered INTERRUPTED once, nothing lands after turn/end', async () => {
    const { clock, rt } = setup({
      retryPolicy: {
        maxAttempts: 3,
        decide: () => {
          throw new Error('policy bug');
        },
      },
    });
    const model = scriptedModel([
      { toolCalls: [{ toolName: 'read', input: { path: 'slow', ms: 100 } }], streamError: { error: new Error('connection reset') } },
    ], { clock });
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done);
    await clock.advance(500);
    expect(out.outcome).toBe('failed');
    const events = rt.log.events();
    const results = events.filter((e) => e.type === 'tool/result');
    expect(results).toHaveLength(1);
    expect(results[0]!.type === 'tool/result' && results[0]!.result.error?.code).toBe(ErrorCode.INTERRUPTED);
    const t = types(events);
    expect(t.indexOf('step/end')).toBeLessThan(t.indexOf('turn/end'));
    expect(t.slice(t.indexOf('turn/end') + 1).filter((x) => x.startsWith('tool/') || x.startsWith('step/'))).toEqual([]);
  });
});
