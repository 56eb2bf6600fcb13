import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/protocol/index.js';
import { compactedStub } from '../../src/runtime/projection/compactedText.js';
import { projectPrompt } from '../../src/runtime/projection/prompt.js';
import { promptSize } from '../../src/runtime/projection/promptSize.js';
import { appendStep, failed, newLog, ok, twoStepTurn } from './fixtures.js';

describe('projectPrompt', () => {
  it('turns a two-step turn into user, assistant and tool messages, results in call order, errors as error-text', () => {
    const log = newLog();
    twoStepTurn(log);
    expect(projectPrompt(log.events(), { system: 'You are dsh.' })).toEqual([
      { role: 'system', content: 'You are dsh.' },
      { role: 'user', content: [{ type: 'text', text: 'Read a, b, c and d, then write the summary.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading the four files.' },
          { type: 'tool-call', toolCallId: 'c0', toolName: 'read', input: { path: 'a.txt' } },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: { path: 'b.txt' } },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'read', input: { path: 'c.txt' } },
          // Cut-off JSON stays the raw text the model sent.
          { type: 'tool-call', toolCallId: 'c3', toolName: 'read', input: '{"path":"d.t' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c0', toolName: 'read', output: { type: 'text', value: 'alpha\n' } },
          { type: 'tool-result', toolCallId: 'c1', toolName: 'read', output: { type: 'text', value: 'bravo\n' } },
          { type: 'tool-result', toolCallId: 'c2', toolName: 'read', output: { type: 'error-text', value: 'c.txt: no such file' } },
          { type: 'tool-result', toolCallId: 'c3', toolName: 'read', output: { type: 'error-text', value: 'arguments are not valid JSON' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Writing the summary.' },
          { type: 'tool-call', toolCallId: 'w0', toolName: 'write', input: { path: 'summary.txt', content: 'alpha bravo delta' } },
        ],
      },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'w0', toolName: 'write', output: { type: 'error-text', value: 'summary.txt changed since it was read' } }],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'Done: c.txt is missing.' }] },
    ]);
  });

  it('keeps earlier turns in order and stops at the requested turn', () => {
    const log = newLog();
    twoStepTurn(log, 'turn-1');
    log.append({ type: 'turn/start', turnId: 'turn-2', input: 'And now e?' });
    appendStep(log, 'turn-2', 0, { text: ['No e.'] });
    log.append({ type: 'turn/start', turnId: 'turn-3', input: 'Thanks.' });

    const all = projectPrompt(log.events());
    const users = all.filter((m) => m.role === 'user').map((m) => (m.content[0] as { text: string }).text);
    expect(users).toEqual(['Read a, b, c and d, then write the summary.', 'And now e?', 'Thanks.']);
    expect(all.at(-2)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'No e.' }] });

    const upToTurn2 = projectPrompt(log.events(), { turnId: 'turn-2' });
    expect(upToTurn2).toEqual(all.slice(0, -1));
    expect(projectPrompt(log.events(), { turnId: 'turn-1' })).toEqual(all.slice(0, -3));
  });

  it('drops the partial text of a request that failed, keeps the retried answer', () => {
    const log = newLog();
    log.append({ type: 'turn/start', turnId: 't', input: 'hi' });
    log.append({ type: 'step/start', turnId: 't', stepIndex: 0 });
    log.append({ type: 'llm/stream', turnId: 't', stepIndex: 0, kind: 'text', text: 'Half an ans' });
    log.append({ type: 'agent/request-error', turnId: 't', stepIndex: 0, attempt: 1, kind: 'retryable', status: 503, message: 'overloaded', action: 'retry', delayMs: 1000 });
    log.append({ type: 'llm/stream', turnId: 't', stepIndex: 0, kind: 'reasoning', text: 'thinking' });
    log.append({ type: 'llm/stream', turnId: 't', stepIndex: 0, kind: 'text', text: 'A whole answer.' });
    log.append({ type: 'step/end', turnId: 't', stepIndex: 0, finishReason: 'stop', toolCalls: 0 });
    expect(projectPrompt(log.events())).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'A whole answer.' }] },
    ]);
  });

  it('ignores calls run outside any turn and shows a running call without a result', () => {
    const log = newLog();
    const solo = log.append({ type: 'tool/call', callId: 'x', toolName: 'read', input: '{}', index: 0, executionMode: 'parallel' });
    log.append({ type: 'tool/result', callId: 'x', toolName: 'read', sourceEventSeqs: [solo.seq], result: ok('x', 'read', 'solo') });
    log.append({ type: 'turn/start', turnId: 't', input: 'go' });
    log.append({ type: 'step/start', turnId: 't', stepIndex: 0 });
    log.append({ type: 'tool/call', turnId: 't', stepIndex: 0, callId: 'r', toolName: 'read', input: '{"path":"a"}', index: 0, executionMode: 'parallel' });
    expect(projectPrompt(log.events())).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'r', toolName: 'read', input: { path: 'a' } }] },
    ]);
  });

  it('shows stubbed results as stubs naming their seq and spill locator, and the prompt shrinks', () => {
    const log = newLog();
    log.append({ type: 'turn/start', turnId: 't', input: 'grep' });
    log.append({ type: 'step/start', turnId: 't', stepIndex: 0 });
    const big = 'match\n'.repeat(2_000);
    const c0 = log.append({ type: 'tool/call', turnId: 't', stepIndex: 0, callId: 'g0', toolName: 'grep', input: '{"q":"a"}', index: 0, executionMode: 'parallel' });
    const c1 = log.append({ type: 'tool/call', turnId: 't', stepIndex: 0, callId: 'g1', toolName: 'grep', input: '{"q":"b"}', index: 1, executionMode: 'parallel' });
    const r0 = log.append({ type: 'tool/result', turnId: 't', stepIndex: 0, callId: 'g0', toolName: 'grep', sourceEventSeqs: [c0.seq], result: ok('g0', 'grep', big) });
    log.append({ type: 'tool/spilled', turnId: 't', stepIndex: 0, callId: 'g1', locator: 'spill:7f3a', bytes: 99_999, lines: 9_999 });
    const r1 = log.append({ type: 'tool/result', turnId: 't', stepIndex: 0, callId: 'g1', toolName: 'grep', sourceEventSeqs: [c1.seq], result: failed('g1', 'grep', ErrorCode.TOOL_FAILED, 'head…tail '.repeat(100)) });
    const before = projectPrompt(log.events());

    log.append({ type: 'context/compacted', turnId: 't', strategy: 'test', stubbedSeqs: [r0.seq, r1.seq], beforeChars: 0, afterChars: 0 });
    const after = projectPrompt(log.events());
    expect(after.at(-1)).toEqual({
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'g0', toolName: 'grep', output: { type: 'text', value: `[result compacted: 12,000 chars; full text in session log seq ${r0.seq}]` } },
        {
          type: 'tool-result',
          toolCallId: 'g1',
          toolName: 'grep',
          output: { type: 'error-text', value: `[result compacted: 1,000 chars; preview in session log seq ${r1.seq}, full text at spill locator spill:7f3a]` },
        },
      ],
    });
    expect(promptSize(after)).toBeLessThan(promptSize(before));
    // Projecting the log before the compaction event still gives the full view: it is a pure function of the log.
    expect(projectPrompt(log.events({ to: r1.seq }))).toEqual(before);
  });

  it('promptSize counts the characters of content', () => {
    expect(
      promptSize([
        { role: 'system', content: 'abc' },
        { role: 'user', content: [{ type: 'text', text: 'hello' }] },
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'x', toolName: 'read', input: { p: 1 } }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'x', toolName: 'read', output: { type: 'error-text', value: '12345678' } }] },
      ]),
    ).toBe(3 + 5 + 'read'.length + '{"p":1}'.length + 8);
    expect(compactedStub({ chars: 1_234_567, seq: 3 })).toBe('[result compacted: 1,234,567 chars; full text in session log seq 3]');
  });
});
