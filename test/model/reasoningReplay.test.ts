/** Reasoning replay in the prompt projection, the turn answer projection, and old logs. */
import { describe, expect, it } from 'vitest';
import { LogEventSchema } from '../../src/protocol/index.js';
import { projectPrompt } from '../../src/runtime/projection/prompt.js';
import { turnAnswer } from '../../src/runtime/projection/turnAnswer.js';
import { newLog, ok } from './fixtures.js';

function stepWithReasoning(signed: boolean) {
  const log = newLog();
  log.append({ type: 'turn/start', turnId: 't', input: 'go' });
  log.append({ type: 'step/start', turnId: 't', stepIndex: 0 });
  log.append({ type: 'llm/stream', turnId: 't', stepIndex: 0, kind: 'reasoning', text: 'think ' });
  log.append({ type: 'llm/stream', turnId: 't', stepIndex: 0, kind: 'reasoning', text: 'more', ...(signed ? { providerMetadata: { anthropic: { signature: 'S' } } } : {}) });
  log.append({ type: 'llm/stream', turnId: 't', stepIndex: 0, kind: 'text', text: 'Reading.' });
  const call = log.append({ type: 'tool/call', turnId: 't', stepIndex: 0, callId: 'c0', toolName: 'read', input: '{"path":"a"}', index: 0, executionMode: 'parallel' });
  log.append({ type: 'tool/result', turnId: 't', stepIndex: 0, callId: 'c0', toolName: 'read', sourceEventSeqs: [call.seq], result: ok('c0', 'read', 'A') });
  log.append({ type: 'step/end', turnId: 't', stepIndex: 0, finishReason: 'tool-calls', toolCalls: 1, usage: { inputTokens: 10, outputTokens: 3, requests: 1 } });
  return log;
}

describe('reasoning replay', () => {
  it('a signed reasoning block is replayed, with its metadata, before the text and the tool call', () => {
    const [, assistant] = projectPrompt(stepWithReasoning(true).events());
    expect(assistant).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'think more', providerOptions: { anthropic: { signature: 'S' } } },
        { type: 'text', text: 'Reading.' },
        { type: 'tool-call', toolCallId: 'c0', toolName: 'read', input: { path: 'a' } },
      ],
    });
  });

  it('reasoning without provider metadata (and every log written before this field) is not replayed', () => {
    const events = stepWithReasoning(false).events();
    // An old log, read back from disk, still parses.
    for (const e of JSON.parse(JSON.stringify(events)) as unknown[]) LogEventSchema.parse(e);
    expect(projectPrompt(events)[1]).toMatchObject({ content: [{ type: 'text' }, { type: 'tool-call' }] });
  });

  it("a failed attempt's reasoning is dropped with its text", () => {
    const log = newLog();
    log.append({ type: 'turn/start', turnId: 't', input: 'go' });
    log.append({ type: 'step/start', turnId: 't', stepIndex: 0 });
    log.append({ type: 'llm/stream', turnId: 't', stepIndex: 0, kind: 'reasoning', text: 'half', providerMetadata: { anthropic: { signature: 'S1' } } });
    log.append({ type: 'agent/request-error', turnId: 't', stepIndex: 0, attempt: 1, kind: 'retryable', message: 'x', action: 'retry', delayMs: 0 });
    log.append({ type: 'llm/stream', turnId: 't', stepIndex: 0, kind: 'reasoning', text: 'whole', providerMetadata: { anthropic: { signature: 'S2' } } });
    log.append({ type: 'llm/stream', turnId: 't', stepIndex: 0, kind: 'text', text: 'Answer.' });
    expect(projectPrompt(log.events())[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'whole', providerOptions: { anthropic: { signature: 'S2' } } },
        { type: 'text', text: 'Answer.' },
      ],
    });
  });
});

describe('turnAnswer', () => {
  it("is the last step's text (a failed attempt's text dropped) and the usage summed over the turn's steps", () => {
    const log = stepWithReasoning(true);
    log.append({ type: 'step/start', turnId: 't', stepIndex: 1 });
    log.append({ type: 'llm/stream', turnId: 't', stepIndex: 1, kind: 'text', text: 'half an ans' });
    log.append({ type: 'agent/request-error', turnId: 't', stepIndex: 1, attempt: 1, kind: 'retryable', message: 'x', action: 'retry', delayMs: 0 });
    log.append({ type: 'llm/stream', turnId: 't', stepIndex: 1, kind: 'text', text: 'The ' });
    log.append({ type: 'llm/stream', turnId: 't', stepIndex: 1, kind: 'text', text: 'answer.' });
    log.append({ type: 'step/end', turnId: 't', stepIndex: 1, finishReason: 'stop', toolCalls: 0, usage: { inputTokens: 20, outputTokens: 2, cacheReadTokens: 5, requests: 1 } });
    log.append({ type: 'turn/end', turnId: 't', outcome: 'completed', steps: 2 });
    expect(turnAnswer(log.events(), 't')).toEqual({ text: 'The answer.', usage: { inputTokens: 30, outputTokens: 5, cacheReadTokens: 5, requests: 2 } });
    expect(turnAnswer(log.events(), 'other')).toEqual({ text: '' });
  });
});
