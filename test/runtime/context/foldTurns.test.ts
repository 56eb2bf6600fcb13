/**
 * Issue 16.2: whole old turns leave the prompt for a summary, written by a model when one is
 * configured and by a deterministic digest otherwise (or when the model fails). The turns stay in
 * the log; the `context/compacted` event names them and carries the summary.
 */
import { APICallError } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../../../src/adapters/model/index.js';
import type { LogEventOf } from '../../../src/protocol/index.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { modelSummarizer, type TurnSummarizer } from '../../../src/runtime/context/summarizer.js';
import { digestSummary, readFoldedTurns } from '../../../src/runtime/context/turnDigest.js';
import { projectPrompt } from '../../../src/runtime/projection/prompt.js';
import { promptSize } from '../../../src/runtime/projection/promptSize.js';
import { SUMMARY_PREFIX } from '../../../src/runtime/projection/compactedText.js';
import { appendStep, failed, newLog, ok } from '../../model/fixtures.js';

const LONG = 'long answer text. '.repeat(200); // 3,600 chars

/** `n` finished turns, each a question, one `read` call (the odd ones fail) and a long answer. */
function finishedTurns(n: number) {
  const log = newLog();
  for (let i = 1; i <= n; i++) {
    const turnId = `turn-${i}`;
    log.append({ type: 'turn/start', turnId, input: `question ${i}` });
    appendStep(log, turnId, 0, {
      calls: [{ callId: `c${i}`, toolName: 'read', input: '{"path":"a"}', result: i % 2 ? failed(`c${i}`, 'read', 'FS_NOT_FOUND', 'no such file') : ok(`c${i}`, 'read', 'contents') }],
    });
    log.append({ type: 'step/start', turnId, stepIndex: 1 });
    log.append({ type: 'llm/stream', turnId, stepIndex: 1, kind: 'text', text: `answer ${i}: ${LONG}` });
    log.append({ type: 'step/end', turnId, stepIndex: 1, finishReason: 'stop', toolCalls: 0 });
    log.append({ type: 'turn/end', turnId, outcome: 'completed', steps: 2 });
  }
  return log;
}

const compactions = (events: readonly { type: string }[]) => events.filter((e): e is LogEventOf<'context/compacted'> => e.type === 'context/compacted');

describe('the deterministic digest', () => {
  it('says per turn what was asked, which tools ran (with failures) and what was answered, clipped', () => {
    const log = finishedTurns(2);
    const turns = readFoldedTurns(log.events(), ['turn-1', 'turn-2']);
    expect(turns[0]).toMatchObject({ turnId: 'turn-1', input: 'question 1', tools: [{ name: 'read', calls: 1, errors: 1 }], outcome: 'completed' });
    expect(turns[1]!.tools).toEqual([{ name: 'read', calls: 1, errors: 0 }]);
    expect(turns[0]!.answer.length).toBeLessThanOrEqual(240);
    const text = digestSummary(undefined, turns, 5_000);
    expect(text).toContain('- turn-1: asked "question 1". Tools: read×1 (1 failed). Answered: "answer 1: long answer text.');
    expect(text).toContain('- turn-2: asked "question 2". Tools: read×1. Answered:');
  });

  it('stays within its budget however many turns it covers: the oldest lines become a count', () => {
    const log = finishedTurns(40);
    let summary: string | undefined;
    for (let i = 0; i < 40; i += 10) {
      const ids = Array.from({ length: 10 }, (_, k) => `turn-${i + k + 1}`);
      summary = digestSummary(summary, readFoldedTurns(log.events(), ids), 2_000);
      expect(summary.length).toBeLessThanOrEqual(2_000);
    }
    const omitted = Number(/\((\d+) earlier turns omitted\)/.exec(summary!)![1]);
    const lines = summary!.split('\n').filter((l) => l.startsWith('- '));
    expect(omitted + lines.length).toBe(40);
    expect(lines.at(-1)).toContain('turn-40');
  });

  it('keeps a model-written previous summary as its oldest line', () => {
    const text = digestSummary('The user is refactoring the parser.', readFoldedTurns(finishedTurns(1).events(), ['turn-1']), 5_000);
    expect(text).toContain('- earlier summary: The user is refactoring the parser.');
  });
});

describe('folding before a turn', () => {
  const window = { maxChars: 20_000 };
  const input = 'and now?';

  it('folds the oldest finished turns with the configured model summariser; the new turn sees the summary', async () => {
    const log = finishedTurns(6); // ≈ 22,000 chars: over 75 % of the window
    const summarizerModel = scriptedModel([{ text: 'The user asked six questions; reads of "a" failed on odd turns.' }]);
    const model = scriptedModel([{ text: 'fine' }]);
    const rt = createRuntime({ log, contextWindow: { ...window, summarizer: modelSummarizer(summarizerModel) } });
    const result = await rt.startTurn({ model, input }).done;
    expect(result.outcome).toBe('completed');

    const [fold] = compactions(log.events()).filter((e) => e.foldedTurnIds);
    expect(fold).toMatchObject({ strategy: 'fold-old-turns:model', turnId: 'turn-7', summary: 'The user asked six questions; reads of "a" failed on odd turns.', stubbedSeqs: [] });
    expect(fold!.foldedTurnIds![0]).toBe('turn-1');
    expect(fold!.afterChars).toBeLessThanOrEqual(window.maxChars * 0.5);
    // The summariser saw the folded turns, and the model's prompt starts with the summary.
    expect(JSON.stringify(summarizerModel.calls[0]!.prompt)).toContain('question 1');
    const prompt = model.calls[0]!.prompt;
    expect(prompt[0]).toEqual({ role: 'user', content: [{ type: 'text', text: `${SUMMARY_PREFIX}${fold!.summary}` }] });
    expect(JSON.stringify(prompt)).not.toContain('question 1"');
    expect(promptSize(prompt)).toBeLessThanOrEqual(window.maxChars * 0.5);
    // The fold comes before the turn it made room for.
    const seqOf = (type: string) => log.events().find((e) => e.type === type && 'turnId' in e && e.turnId === 'turn-7')!.seq;
    expect(fold!.seq).toBeLessThan(seqOf('turn/start'));
  });

  it('falls back to the digest when the summariser throws, says so, and still folds', async () => {
    const log = finishedTurns(6);
    const broken: TurnSummarizer = () => {
      throw Object.assign(new Error('boom'), { toString: () => { throw new Error('hostile toString'); } });
    };
    const rt = createRuntime({ log, contextWindow: { ...window, summarizer: broken } });
    expect((await rt.startTurn({ model: scriptedModel([{ text: 'ok' }]), input }).done).outcome).toBe('completed');
    expect(log.events().find((e) => e.type === 'warning')).toMatchObject({ code: 'SUMMARY_FALLBACK', turnId: 'turn-7' });
    const [fold] = compactions(log.events());
    expect(fold).toMatchObject({ strategy: 'fold-old-turns:digest' });
    expect(fold!.summary).toContain('- turn-1: asked "question 1"');
  });

  it('clips a summariser that answers too much, and digests one that answers nothing or not text', async () => {
    for (const [answer, strategy] of [['y'.repeat(1_000_000), 'fold-old-turns:model'], ['', 'fold-old-turns:digest'], [42, 'fold-old-turns:digest']] as const) {
      const log = finishedTurns(6);
      const rt = createRuntime({ log, contextWindow: { ...window, summaryMaxChars: 1_500, summarizer: (() => answer) as unknown as TurnSummarizer } });
      await rt.startTurn({ model: scriptedModel([{ text: 'ok' }]), input }).done;
      const [fold] = compactions(log.events());
      expect(fold!.strategy).toBe(strategy);
      expect(fold!.summary!.length).toBeLessThanOrEqual(1_500);
    }
  });

  it('does nothing while the finished turns fit under 75 % of the window', async () => {
    const log = finishedTurns(2);
    const rt = createRuntime({ log, contextWindow: window });
    await rt.startTurn({ model: scriptedModel([{ text: 'ok' }]), input }).done;
    expect(compactions(log.events())).toEqual([]);
  });

  it('refuses a window that cannot work, at creation', () => {
    expect(() => createRuntime({ contextWindow: { maxChars: 10 } })).toThrow(RangeError);
    expect(() => createRuntime({ contextWindow: { maxChars: 10_000, foldTo: 0.9, foldAt: 0.5 } })).toThrow(RangeError);
    expect(() => createRuntime({ contextWindow: { maxChars: 10_000, summaryMaxChars: 9_000 } })).toThrow(RangeError);
  });
});

describe('an overflow with no window given', () => {
  it('folds old turns when stubbing results cannot shrink the prompt, then the retry succeeds', async () => {
    // Tool results are tiny: only text fills the prompt, so only folding whole turns can help.
    const log = finishedTurns(8);
    const tooLong = new APICallError({ message: 'prompt is too long', url: 'x', requestBodyValues: {}, statusCode: 400, isRetryable: false });
    const model = scriptedModel([{ error: tooLong }, { text: 'fits now' }]);
    const rt = createRuntime({ log });
    const result = await rt.startTurn({ model, input: 'next' }).done;
    expect(result).toMatchObject({ outcome: 'completed', text: 'fits now' });
    const folds = compactions(log.events()).filter((e) => e.foldedTurnIds);
    expect(folds).toHaveLength(1);
    expect(folds[0]).toMatchObject({ strategy: 'fold-old-turns:digest', turnId: 'turn-9' });
    expect(folds[0]!.afterChars).toBeLessThan(folds[0]!.beforeChars);
    expect(promptSize(model.calls[1]!.prompt)).toBeLessThan(promptSize(model.calls[0]!.prompt));
    // The current turn is never folded: its question is in the retried request.
    expect(JSON.stringify(model.calls[1]!.prompt)).toContain('"next"');
    expect(projectPrompt(log.events()).length).toBeGreaterThan(0);
  });
});

describe('a summariser that never answers', () => {
  it('is abandoned at its deadline (its signal aborted): the digest folds the turns and the turn starts', async () => {
    const { ManualClock } = await import('../../../src/runtime/clock.js');
    const clock = new ManualClock();
    const log = finishedTurns(6);
    let aborted = false;
    const hung: TurnSummarizer = ({ signal }) =>
      new Promise<string>(() => {
        signal?.addEventListener('abort', () => (aborted = true), { once: true });
      });
    const rt = createRuntime({ log, clock, contextWindow: { maxChars: 20_000, summarizer: hung, summaryTimeoutMs: 5_000 } });
    const done = rt.startTurn({ model: scriptedModel([{ text: 'ok' }]), input: 'and now?' }).done;
    // Waits (however long the machine takes) for the summariser's deadline to be armed.
    while (clock.pending === 0) await new Promise((r) => setTimeout(r, 5));
    await clock.advance(5_000);
    expect((await done).outcome).toBe('completed');
    expect(aborted).toBe(true);
    expect(log.events().find((e) => e.type === 'warning')).toMatchObject({ code: 'SUMMARY_FALLBACK', message: expect.stringContaining('did not answer within 5000 ms') });
    expect(compactions(log.events())[0]).toMatchObject({ strategy: 'fold-old-turns:digest' });
  });
});
