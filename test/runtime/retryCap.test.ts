/**
 * Issue 11.6 (SPEC §5): retries are capped by the step machine, not by the policy. A policy that
 * always answers `retry` cannot loop forever; every retry follows a logged backoff (an
 * `agent/request-error` with action `retry` and its `delayMs`) or a logged reduction
 * (`context/compacted`), and an overflow is never retried in place.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { MAX_REQUEST_ATTEMPTS } from '../../machines/step.js';
import { contextOverflowError, rateLimitError } from '../../src/adapters/model/index.js';
import type { LogEvent, LogEventOf } from '../../src/protocol/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
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
