/**
 * Issue 11.6 (SPEC §5): retries are capped by the step machine, not by the policy. A policy that
 * always answers `retry` cannot loop forever; every retry follows a logged backoff (an
 * `agent/request-error` with action `retry` and its `delayMs`) or a logged reduction
 * (`context/compacted`), and an overflow is never retried in place.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MAX_REQUEST_ATTEMPTS } from '../../machines/step.js';
import { contextOverflowError, rateLimitError, scriptedModel } from '../../src/adapters/model/index.js';
import type { LogEvent, LogEventOf } from '../../src/protocol/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import type { RequestRetryPolicy } from '../../src/runtime/requestErrors.js';
import { settle } from './settle.js';

const finish = { type: 'finish' as const, finishReason: { unified: 'stop' as const, raw: undefined }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } } };

/**
 * A model whose requests fail with `error()`; counts them. After 100 failures it answers, so a
 * step without a cap ends (`completed`, 101 requests) instead of hanging the test.
 */
function failingModel(error: () => unknown): { model: LanguageModelV3; requests: () => number } {
  let n = 0;
  const model = new MockLanguageModelV3({
    doStream: async () => {
      if (++n <= 100) throw error();
      const parts = [{ type: 'text-delta' as const, id: 't', delta: 'finally' }, finish];
      return { stream: new ReadableStream({ start: (c) => { for (const p of parts) c.enqueue(p); c.close(); } }) };
    },
  });
  return { model, requests: () => n };
}

const alwaysRetry = (maxAttempts: number, delayMs = 0): RequestRetryPolicy => ({ maxAttempts, decide: () => ({ action: 'retry', delayMs }) });
const of = <T extends LogEvent['type']>(events: readonly LogEvent[], type: T) => events.filter((e): e is LogEventOf<T> => e.type === type);

describe('the step caps model-request retries (issue 11.6)', () => {
  it('a policy that always answers retry (and claims no bound) stops at the machine cap, every retry after a logged backoff', async () => {
    const clock = new ManualClock();
    const rt = createRuntime({ clock, retryPolicy: alwaysRetry(Number.POSITIVE_INFINITY, Number.NaN) });
    const { model, requests } = failingModel(() => rateLimitError());
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done, 2_000);
    expect(out.outcome).toBe('failed');
    expect(out.error).toMatch(/cap of 16 request/);
    expect(requests()).toBe(MAX_REQUEST_ATTEMPTS);
    const errors = of(rt.log.events(), 'agent/request-error');
    expect(errors.map((e) => e.attempt)).toEqual(Array.from({ length: MAX_REQUEST_ATTEMPTS }, (_, i) => i + 1));
    expect(errors.slice(0, -1).every((e) => e.action === 'retry' && e.delayMs === 0)).toBe(true);
    expect(errors.at(-1)).toMatchObject({ action: 'give-up', attempt: MAX_REQUEST_ATTEMPTS });
    expect(rt.log.events().at(-1)).toMatchObject({ type: 'turn/end', outcome: 'failed' });
  });

  it.each([-5, Number.POSITIVE_INFINITY])('a policy whose maxAttempts is NaN stops at the machine cap; a backoff of %s is logged (and waited) as 0', async (delayMs) => {
    const clock = new ManualClock();
    const rt = createRuntime({ clock, retryPolicy: alwaysRetry(Number.NaN, delayMs) });
    const { model, requests } = failingModel(() => rateLimitError());
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done, 2_000);
    expect(out.outcome).toBe('failed');
    expect(requests()).toBe(MAX_REQUEST_ATTEMPTS);
    const errors = of(rt.log.events(), 'agent/request-error');
    expect(errors.slice(0, -1).map((e) => e.delayMs)).toEqual(Array.from({ length: MAX_REQUEST_ATTEMPTS - 1 }, () => 0));
  });

  it('a policy without maxAttempts (plain JavaScript) is capped by the machine all the same', async () => {
    const clock = new ManualClock();
    const rt = createRuntime({ clock, retryPolicy: { decide: () => ({ action: 'retry', delayMs: 0 }) } as unknown as RequestRetryPolicy });
    const { model, requests } = failingModel(() => rateLimitError());
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done, 2_000);
    expect(out.outcome).toBe('failed');
    expect(requests()).toBe(MAX_REQUEST_ATTEMPTS);
  });

  it('a compaction asked for an error that is no overflow waits no backoff: its request error logs no delay', async () => {
    const clock = new ManualClock();
    const rt = createRuntime({ clock, retryPolicy: { maxAttempts: 3, decide: () => ({ action: 'compact' }) }, compact: () => false });
    const { model, requests } = failingModel(() => rateLimitError());
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done, 2_000);
    expect(out.outcome).toBe('failed');
    expect(requests()).toBe(1);
    const errors = of(rt.log.events(), 'agent/request-error');
    expect(errors).toMatchObject([{ kind: 'retryable', action: 'compact' }]);
    expect(errors[0]!.delayMs).toBeUndefined();
  });

  it("a policy's own give-up is logged as it gave it, also at the cap", async () => {
    const clock = new ManualClock();
    const rt = createRuntime({ clock, retryPolicy: { maxAttempts: 1, decide: () => ({ action: 'give-up', reason: 'not retryable' }) } });
    const { model, requests } = failingModel(() => new Error('invalid api key'));
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done, 2_000);
    expect(out.outcome).toBe('failed');
    expect(requests()).toBe(1);
    const [error] = of(rt.log.events(), 'agent/request-error');
    expect(error).toMatchObject({ action: 'give-up', attempt: 1 });
    expect(error!.message).toMatch(/invalid api key/);
    expect(error!.message).not.toMatch(/cap of/);
  });

  it("a policy's lower maxAttempts is the cap", async () => {
    const clock = new ManualClock();
    const rt = createRuntime({ clock, retryPolicy: alwaysRetry(3, 250) });
    const { model, requests } = failingModel(() => rateLimitError());
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done, 2_000);
    expect(out.outcome).toBe('failed');
    expect(requests()).toBe(3);
    expect(of(rt.log.events(), 'agent/request-error').map((e) => `${e.attempt}:${e.action}:${e.delayMs ?? '-'}`)).toEqual(['1:retry:250', '2:retry:250', '3:give-up:-']);
  });

  it('an overflow answered retry is not retried in place: the step compacts first, and gives up when nothing shrinks', async () => {
    const clock = new ManualClock();
    const rt = createRuntime({ clock, retryPolicy: alwaysRetry(Number.POSITIVE_INFINITY) });
    const { model, requests } = failingModel(() => contextOverflowError());
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done, 2_000);
    expect(out.outcome).toBe('failed');
    expect(out.error).toMatch(/compaction could not shrink/);
    expect(requests()).toBe(1);
    expect(of(rt.log.events(), 'agent/request-error').map((e) => e.action)).toEqual(['compact']);
  });

  it('an overflow retried after a compaction that shrank: each retry follows a context/compacted event, still within the cap', async () => {
    const clock = new ManualClock();
    let compactions = 0;
    const rt = createRuntime({
      clock,
      retryPolicy: alwaysRetry(Number.POSITIVE_INFINITY),
      compact: ({ log, turnId }) => {
        compactions++;
        log.append({ type: 'context/compacted', turnId, strategy: 'test', stubbedSeqs: [], beforeChars: 100, afterChars: 50 });
        return true;
      },
    });
    const { model, requests } = failingModel(() => contextOverflowError());
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done, 2_000);
    expect(out.outcome).toBe('failed');
    expect(requests()).toBe(MAX_REQUEST_ATTEMPTS);
    expect(compactions).toBe(MAX_REQUEST_ATTEMPTS - 1);
    // Between any two requests (request-errors) there is a context/compacted event.
    const kinds = rt.log.events().filter((e) => e.type === 'agent/request-error' || e.type === 'context/compacted').map((e) => e.type);
    for (let i = 1; i < kinds.length; i++) if (kinds[i] === 'agent/request-error') expect(kinds[i - 1]).toBe('context/compacted');
  });
});

describe("what a failed step tells the user (turn.done's error, agent/request-error)", () => {
  it("a request the policy gives up on: the turn's error names the error kind and the policy's message", async () => {
    const clock = new ManualClock();
    const rt = createRuntime({ clock, retryPolicy: { maxAttempts: 3, decide: () => ({ action: 'give-up', reason: 'not retryable' }) } });
    const { model } = failingModel(() => new Error('invalid api key'));
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done, 2_000);
    expect(out.error).toBe('model request failed (fatal): invalid api key (not retryable)');
    expect(of(rt.log.events(), 'agent/request-error')).toMatchObject([{ attempt: 1, kind: 'fatal', action: 'give-up', message: 'invalid api key (not retryable)' }]);
  });

  it('an overflow compaction could not shrink: the error says so, with the request error', async () => {
    const clock = new ManualClock();
    const rt = createRuntime({ clock, retryPolicy: alwaysRetry(Number.POSITIVE_INFINITY) });
    const { model } = failingModel(() => contextOverflowError());
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done, 2_000);
    const [logged] = of(rt.log.events(), 'agent/request-error');
    expect(logged).toMatchObject({ kind: 'context-overflow', action: 'compact', status: 400 });
    expect(out.error).toBe(`context overflow, and compaction could not shrink the prompt: ${logged!.message}`);
  });

  it('the policy is told how many compactions the step has made so far', async () => {
    const clock = new ManualClock();
    const seen: number[] = [];
    const rt = createRuntime({
      clock,
      retryPolicy: {
        maxAttempts: 4,
        decide: ({ compactionsTried }) => {
          seen.push(compactionsTried);
          return { action: 'compact' };
        },
      },
      compact: () => true,
    });
    const { model, requests } = failingModel(() => contextOverflowError());
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done, 2_000);
    expect(out.outcome).toBe('failed');
    expect(requests()).toBe(4);
    expect(seen).toEqual([0, 1, 2, 3]);
  });

  // An exclusive tool: its calls wait for the end of the response, so a response that breaks off leaves them not started.
  const write = defineTool({ name: 'write', input: z.object({ path: z.string() }), execute: async () => 'written' });
  const aborted = (events: readonly LogEvent[]) => of(events, 'tool/result').map((e) => [e.callId, e.result.error?.code, e.result.error?.message]);

  it('a response that breaks off after calls arrived, retryably: the request error says the calls are kept; calls not started are told why', async () => {
    const clock = new ManualClock();
    const rt = createRuntime({ clock, tools: [write] });
    const model = scriptedModel(
      [{ toolCalls: [{ toolName: 'write', input: { path: 'a' } }, { toolName: 'write', input: { path: 'b' } }], streamError: { error: rateLimitError() } }, { text: 'done' }],
      { clock },
    );
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done, 2_000);
    expect(out).toMatchObject({ outcome: 'completed', steps: 2, text: 'done' });
    const message = 'Rate limit reached for requests (the response broke off after 2 call(s); they are kept and a new request follows)';
    expect(of(rt.log.events(), 'agent/request-error')).toMatchObject([{ attempt: 1, kind: 'retryable', status: 429, action: 'retry', delayMs: 0, message }]);
    const why = `the model's response failed before this call was dispatched: the model's response broke off: ${message}`;
    expect(aborted(rt.log.events())).toEqual([
      ['call-1-0', 'ABORTED_BEFORE_DISPATCH', why],
      ['call-1-1', 'ABORTED_BEFORE_DISPATCH', why],
    ]);
  });

  it('a response that breaks off after calls arrived, for good: the turn fails "mid-response", and calls not started are told so', async () => {
    const clock = new ManualClock();
    const rt = createRuntime({ clock, tools: [write], retryPolicy: { maxAttempts: 3, decide: () => ({ action: 'give-up', reason: 'no' }) } });
    const model = scriptedModel([{ toolCalls: [{ toolName: 'write', input: { path: 'a' } }], streamError: { error: new Error('boom') } }, { text: 'never' }], { clock });
    const out = await settle(clock, rt.startTurn({ model, input: 'hi' }).done, 2_000);
    expect(out).toMatchObject({ outcome: 'failed', steps: 1, error: 'model request failed mid-response: boom (no)' });
    expect(of(rt.log.events(), 'agent/request-error')).toMatchObject([{ attempt: 1, kind: 'fatal', action: 'give-up', message: 'boom (no)' }]);
    expect(aborted(rt.log.events())).toEqual([['call-1-0', 'ABORTED_BEFORE_DISPATCH', "the model's response failed before this call was dispatched: model request failed mid-response: boom (no)"]]);
  });
});
