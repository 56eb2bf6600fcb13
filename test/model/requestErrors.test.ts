import { APICallError } from '@ai-sdk/provider';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { apiCallError, contextOverflowError, rateLimitError, serverError } from '../../src/adapters/model/modelErrors.js';
import type { RequestErrorKind } from '../../src/protocol/index.js';
import { classifyRequestError, createRequestRetryPolicy, type RetryDecision } from '../../src/runtime/requestErrors.js';

describe('classifyRequestError', () => {
  it('429 is retryable, with the Retry-After header in ms', () => {
    expect(classifyRequestError(rateLimitError(7))).toEqual({ kind: 'retryable', status: 429, message: 'Rate limit reached for requests', retryAfterMs: 7_000 });
    expect(classifyRequestError(rateLimitError()).retryAfterMs).toBeUndefined();
  });

  it('reads retry-after-ms, and an HTTP-date Retry-After against the injected now', () => {
    const ms = apiCallError({ statusCode: 429, message: 'slow down', responseHeaders: { 'Retry-After-Ms': '250' } });
    expect(classifyRequestError(ms).retryAfterMs).toBe(250);
    const now = Date.parse('2025-01-01T00:00:00Z');
    const date = apiCallError({ statusCode: 503, message: 'busy', responseHeaders: { 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' } });
    expect(classifyRequestError(date, { now }).retryAfterMs).toBe(30_000);
  });

  it('503 and other 5xx, 408 and 409 are retryable', () => {
    expect(classifyRequestError(serverError(503))).toMatchObject({ kind: 'retryable', status: 503 });
    for (const statusCode of [408, 409, 500, 529]) {
      expect(classifyRequestError(apiCallError({ statusCode, message: 'x', isRetryable: false })).kind).toBe('retryable');
    }
  });

  it('400 context_length_exceeded and 413 prompt is too long are context overflows', () => {
    expect(classifyRequestError(contextOverflowError('openai'))).toMatchObject({ kind: 'context-overflow', status: 400 });
    expect(classifyRequestError(contextOverflowError('anthropic'))).toMatchObject({ kind: 'context-overflow', status: 413 });
    // The code only in the body, the message generic.
    const bodyOnly = apiCallError({ statusCode: 400, message: 'Bad Request', responseBody: '{"error":{"code":"context_length_exceeded"}}' });
    expect(classifyRequestError(bodyOnly).kind).toBe('context-overflow');
    // An error part streamed by the provider: no status, only the text.
    expect(classifyRequestError({ message: 'prompt is too long: 201000 tokens > 200000 maximum' }).kind).toBe('context-overflow');
    // Other 400s are not overflows.
    expect(classifyRequestError(apiCallError({ statusCode: 400, message: 'invalid tool schema' })).kind).toBe('fatal');
  });

  it('isRetryable without a status is retryable; wrapped errors are found through cause', () => {
    const noStatus = new APICallError({ message: 'socket hang up', url: 'x', requestBodyValues: {}, isRetryable: true });
    expect(classifyRequestError(noStatus).kind).toBe('retryable');
    const wrapped = new Error('stream failed', { cause: rateLimitError(2) });
    expect(classifyRequestError(wrapped)).toMatchObject({ kind: 'retryable', status: 429, retryAfterMs: 2_000, message: 'stream failed: Rate limit reached for requests' });
    const reset = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
    expect(classifyRequestError(reset).kind).toBe('retryable');
  });

  it('AbortError, or an aborted request signal, is aborted', () => {
    expect(classifyRequestError(new DOMException('This operation was aborted', 'AbortError')).kind).toBe('aborted');
    const signal = AbortSignal.abort('user cancelled');
    // Whatever the provider threw, the caller's signal says it was a cancel.
    expect(classifyRequestError(serverError(503), { signal }).kind).toBe('aborted');
  });

  it('401 and plain errors are fatal', () => {
    expect(classifyRequestError(apiCallError({ statusCode: 401, message: 'invalid x-api-key' }))).toEqual({ kind: 'fatal', status: 401, message: 'invalid x-api-key' });
    expect(classifyRequestError(new Error('scriptedModel: no more responses'))).toEqual({ kind: 'fatal', message: 'scriptedModel: no more responses' });
    expect(classifyRequestError('boom')).toEqual({ kind: 'fatal', message: 'boom' });
  });
});

describe('RequestRetryPolicy', () => {
  it('retries transport errors with deterministic exponential backoff, then gives up', () => {
    const policy = createRequestRetryPolicy({ baseDelayMs: 100, maxRetries: 3 });
    const decisions = [1, 2, 3, 4].map((attempt) => policy.decide({ kind: 'retryable', attempt, compactionsTried: 0 }));
    expect(decisions).toEqual([
      { action: 'retry', delayMs: 100 },
      { action: 'retry', delayMs: 200 },
      { action: 'retry', delayMs: 400 },
      { action: 'give-up', reason: 'still failing after 3 retries' },
    ]);
    expect(createRequestRetryPolicy({ baseDelayMs: 1000, maxDelayMs: 1500 }).decide({ kind: 'retryable', attempt: 3, compactionsTried: 0 })).toEqual({ action: 'retry', delayMs: 1500 });
  });

  it('honours Retry-After, and gives up when it asks for more than the limit', () => {
    const policy = createRequestRetryPolicy({ baseDelayMs: 100, maxRetryAfterMs: 10_000 });
    expect(policy.decide({ kind: 'retryable', attempt: 1, compactionsTried: 0, retryAfterMs: 7_000 })).toEqual({ action: 'retry', delayMs: 7_000 });
    expect(policy.decide({ kind: 'retryable', attempt: 1, compactionsTried: 0, retryAfterMs: 60_000 }).action).toBe('give-up');
  });

  it('answers context overflow with compaction, retries only when it shrank, and at most maxCompactions times', () => {
    const policy = createRequestRetryPolicy({ maxCompactions: 2 });
    expect(policy.decide({ kind: 'context-overflow', attempt: 1, compactionsTried: 0 })).toEqual({ action: 'compact' });
    expect(policy.decide({ kind: 'context-overflow', attempt: 1, compactionsTried: 1, shrank: true })).toEqual({ action: 'retry', delayMs: 0 });
    expect(policy.decide({ kind: 'context-overflow', attempt: 1, compactionsTried: 1, shrank: false })).toMatchObject({ action: 'give-up', reason: expect.stringContaining('could not shrink') });
    expect(policy.decide({ kind: 'context-overflow', attempt: 2, compactionsTried: 1 })).toEqual({ action: 'compact' });
    expect(policy.decide({ kind: 'context-overflow', attempt: 3, compactionsTried: 2 })).toMatchObject({ action: 'give-up', reason: 'context still too long after 2 compaction(s)' });
  });

  it('overflow retries do not use up the transport retries', () => {
    const policy = createRequestRetryPolicy({ maxRetries: 1, maxCompactions: 2, baseDelayMs: 10 });
    // Two overflows compacted and retried (attempts 1, 2), then a 429 on attempt 3: one retry left.
    expect(policy.decide({ kind: 'retryable', attempt: 3, compactionsTried: 2 })).toEqual({ action: 'retry', delayMs: 10 });
    expect(policy.decide({ kind: 'retryable', attempt: 4, compactionsTried: 2 }).action).toBe('give-up');
    expect(policy.maxAttempts).toBe(4);
  });

  it('never retries aborted or fatal requests', () => {
    const policy = createRequestRetryPolicy();
    expect(policy.decide({ kind: 'aborted', attempt: 1, compactionsTried: 0 }).action).toBe('give-up');
    expect(policy.decide({ kind: 'fatal', attempt: 1, compactionsTried: 0 }).action).toBe('give-up');
  });

  const kinds = fc.constantFrom<RequestErrorKind>('context-overflow', 'retryable', 'aborted', 'fatal');
  const limits = fc.record({ maxRetries: fc.integer({ min: 0, max: 6 }), maxCompactions: fc.integer({ min: 0, max: 4 }), baseDelayMs: fc.integer({ min: 0, max: 5_000 }) });

  it('terminates: against a model that fails forever, every run gives up within the bound', () => {
    fc.assert(
      fc.property(
        limits,
        fc.array(kinds, { minLength: 1, maxLength: 20 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 20 }),
        fc.array(fc.option(fc.integer({ min: 0, max: 120_000 }), { nil: undefined }), { minLength: 1, maxLength: 20 }),
        (opts, errors, shrinks, retryAfters) => {
          const policy = createRequestRetryPolicy(opts);
          const bound = 1 + opts.maxRetries + opts.maxCompactions;
          expect(policy.maxAttempts).toBe(bound);
          // Drive the policy as a step does: the errors and compaction outcomes cycle forever,
          // so only the policy can end the loop.
          let attempt = 1;
          let compactions = 0;
          let decisions = 0;
          let lastCompactShrank: boolean | undefined;
          for (;;) {
            const kind = errors[(attempt - 1) % errors.length]!;
            const retryAfterMs = retryAfters[(attempt - 1) % retryAfters.length];
            decisions++;
            let d: RetryDecision = policy.decide({ kind, attempt, compactionsTried: compactions, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
            if (d.action === 'compact') {
              expect(kind).toBe('context-overflow');
              lastCompactShrank = shrinks[compactions % shrinks.length]!;
              compactions++;
              decisions++;
              d = policy.decide({ kind, attempt, compactionsTried: compactions, shrank: lastCompactShrank });
              expect(d.action).not.toBe('compact');
              // An overflow is retried only after a compaction that shrank the prompt.
              if (d.action === 'retry') expect(lastCompactShrank).toBe(true);
            } else if (d.action === 'retry') {
              expect(kind).toBe('retryable');
            }
            if (d.action === 'give-up') break;
            attempt++;
            expect(attempt).toBeLessThanOrEqual(bound);
            expect(decisions).toBeLessThanOrEqual(2 * bound);
          }
          expect(compactions).toBeLessThanOrEqual(opts.maxCompactions);
          expect(decisions).toBeLessThanOrEqual(2 * bound);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('for any input: no retry of an overflow without a shrink, no compaction past the limit, nothing past maxAttempts', () => {
    fc.assert(
      fc.property(
        limits,
        fc.record({
          kind: kinds,
          attempt: fc.integer({ min: 1, max: 30 }),
          compactionsTried: fc.integer({ min: 0, max: 10 }),
          shrank: fc.option(fc.boolean(), { nil: undefined }),
          retryAfterMs: fc.option(fc.integer({ min: 0, max: 120_000 }), { nil: undefined }),
        }),
        (opts, input) => {
          const policy = createRequestRetryPolicy(opts);
          const { shrank, retryAfterMs, ...rest } = input;
          const d = policy.decide({ ...rest, ...(shrank !== undefined ? { shrank } : {}), ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
          if (d.action === 'retry') {
            expect(input.attempt).toBeLessThan(policy.maxAttempts);
            expect(d.delayMs).toBeGreaterThanOrEqual(0);
            if (input.kind === 'context-overflow') expect(input.shrank).toBe(true);
            else expect(input.kind).toBe('retryable');
          }
          if (d.action === 'compact') {
            expect(input.kind).toBe('context-overflow');
            expect(input.compactionsTried).toBeLessThan(opts.maxCompactions);
            expect(input.shrank).toBeUndefined();
          }
        },
      ),
      { numRuns: 1_000 },
    );
  });
});

describe('classifyRequestError: what real providers send', () => {
  it("in-stream errors under HTTP 200 (Anthropic's event: error, OpenAI's error chunk) are retryable by type", () => {
    for (const type of ['overloaded_error', 'api_error', 'rate_limit_error']) {
      expect(classifyRequestError({ type, message: 'Overloaded' })).toEqual({ kind: 'retryable', message: `Overloaded (${type})` });
    }
    expect(classifyRequestError({ message: 'The server had an error', type: 'server_error', code: null }).kind).toBe('retryable');
    expect(classifyRequestError({ type: 'invalid_request_error', message: 'bad' })).toEqual({ kind: 'fatal', message: 'bad (invalid_request_error)' });
    // The same body wrapped as `{type: 'error', error: {...}}`.
    expect(classifyRequestError({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }).kind).toBe('retryable');
  });

  it('the real cause is not hidden behind "Failed to process successful response"', () => {
    const socket = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    const terminated = new TypeError('terminated', { cause: socket });
    const wrapped = new APICallError({ message: 'Failed to process successful response', url: 'x', requestBodyValues: {}, statusCode: 200, cause: terminated });
    expect(classifyRequestError(wrapped)).toEqual({
      kind: 'retryable',
      status: 200,
      message: 'Failed to process successful response: terminated: other side closed (UND_ERR_SOCKET)',
    });
  });
});

describe('a server that can never be reached (issue 25.7)', () => {
  /** What the OpenAI-compatible provider throws for a failed connection: a retryable APICallError around fetch's error. */
  const wrapped = (cause: unknown) =>
    new APICallError({ message: `Cannot connect to API: ${(cause as Error).message}`, url: 'http://127.0.0.1/x', requestBodyValues: {}, cause, isRetryable: true });

  it('a refused connection (real fetch to a closed port) is fatal at once, its cause named once', async () => {
    const { createServer } = await import('node:net');
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((r) => server.close(() => r()));
    const e = await fetch(`http://127.0.0.1:${port}/`).catch((x: unknown) => x);
    const refused = (e as { cause?: Error }).cause ?? (e as Error);
    const info = classifyRequestError(wrapped(refused));
    expect(info.kind).toBe('fatal');
    expect(info.message.match(/ECONNREFUSED/g)).toHaveLength(1);
    expect(info.message).toMatch(/nothing accepts connections there/);
  });

  it("fetch's 'bad port' (port 9) is fatal too; a reset connection stays retryable", async () => {
    const e = await fetch('http://127.0.0.1:9/').catch((x: unknown) => x);
    const info = classifyRequestError(wrapped((e as { cause?: Error }).cause ?? (e as Error)));
    expect(info.kind).toBe('fatal');
    expect(info.message.match(/bad port/g)).toHaveLength(1);
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    expect(classifyRequestError(wrapped(reset)).kind).toBe('retryable');
  });
});
