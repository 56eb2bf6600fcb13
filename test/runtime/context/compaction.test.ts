import { describe, expect, it } from 'vitest';
import { compactAndMeasure, defaultCompactor, stubOlderToolResults, type Compactor } from '../../../src/runtime/context/compaction.js';
import { projectPrompt } from '../../../src/runtime/projection/prompt.js';
import { promptSize } from '../../../src/runtime/projection/promptSize.js';
import { appendStep, newLog, ok, twoStepTurn } from '../../model/fixtures.js';

const BIG = 'line of output\n'.repeat(1_000); // 15,000 chars

/** Three steps of large read results; the overflow happens on the fourth request. */
function bigTurn() {
  const log = newLog();
  log.append({ type: 'turn/start', turnId: 't', input: 'read everything' });
  const steps = [0, 1, 2].map((s) =>
    appendStep(log, 't', s, {
      calls: [
        { callId: `s${s}a`, toolName: 'read', input: `{"path":"${s}a"}`, result: ok(`s${s}a`, 'read', BIG) },
        { callId: `s${s}b`, toolName: 'read', input: `{"path":"${s}b"}`, result: ok(`s${s}b`, 'read', BIG) },
      ],
    }),
  );
  return { log, steps };
}

function toolOutputs(log: ReturnType<typeof newLog>): string[] {
  return projectPrompt(log.events()).flatMap((m) =>
    m.role === 'tool' ? m.content.map((p) => (p.type === 'tool-result' && (p.output.type === 'text' || p.output.type === 'error-text') ? p.output.value : '?')) : [],
  );
}

describe('default compaction', () => {
  it('stubs the results of older steps, keeps the latest step intact, logs the sizes, and the prompt shrinks', () => {
    const { log, steps } = bigTurn();
    const before = promptSize(projectPrompt(log.events()));

    const m = compactAndMeasure(log, defaultCompactor, { turnId: 't' });

    expect(m).toMatchObject({ compacted: true, shrank: true, beforeChars: before });
    expect(m.afterChars).toBeLessThan(before);
    const last = log.events().at(-1)!;
    expect(last).toMatchObject({ type: 'context/compacted', turnId: 't', strategy: 'stub-older-tool-results', stubbedSeqs: [...steps[0]!, ...steps[1]!], beforeChars: before, afterChars: m.afterChars });
    // The logged size is the size of what the model is sent now.
    expect(promptSize(projectPrompt(log.events()))).toBe(m.afterChars);
    expect(toolOutputs(log)).toEqual([
      `[result compacted: 15,000 chars; full text in session log seq ${steps[0]![0]}]`,
      `[result compacted: 15,000 chars; full text in session log seq ${steps[0]![1]}]`,
      `[result compacted: 15,000 chars; full text in session log seq ${steps[1]![0]}]`,
      `[result compacted: 15,000 chars; full text in session log seq ${steps[1]![1]}]`,
      BIG,
      BIG,
    ]);
    // The full text is still in the log.
    expect(log.get(steps[0]![0]!)).toMatchObject({ type: 'tool/result', result: { content: BIG } });
  });

  it('has nothing more to offer the second time: no event, no shrink', () => {
    const { log } = bigTurn();
    compactAndMeasure(log, defaultCompactor, { turnId: 't' });
    const seq = log.lastSeq;
    expect(defaultCompactor.compact(log.events(), { turnId: 't' })).toBeUndefined();
    const again = compactAndMeasure(log, defaultCompactor, { turnId: 't' });
    expect(again).toMatchObject({ compacted: false, shrank: false });
    expect(again.afterChars).toBe(again.beforeChars);
    expect(log.lastSeq).toBe(seq);
  });

  it('returns undefined for a log whose only results are in the latest step, or too small to stub', () => {
    const single = newLog();
    single.append({ type: 'turn/start', turnId: 't', input: 'x' });
    appendStep(single, 't', 0, { calls: [{ callId: 'a', toolName: 'read', input: '{}', result: ok('a', 'read', BIG) }] });
    expect(defaultCompactor.compact(single.events(), { turnId: 't' })).toBeUndefined();

    // The SPEC §1 turn: its older results are a few characters long, shorter than any stub.
    const small = newLog();
    twoStepTurn(small);
    expect(defaultCompactor.compact(small.events(), { turnId: 'turn-1' })).toBeUndefined();
    const seq = small.lastSeq;
    expect(compactAndMeasure(small, defaultCompactor, { turnId: 'turn-1' })).toMatchObject({ compacted: false, shrank: false });
    expect(small.lastSeq).toBe(seq);
  });

  it('keepRecentSteps: 0 stubs the latest step as well', () => {
    const { log, steps } = bigTurn();
    expect(stubOlderToolResults({ keepRecentSteps: 0 }).compact(log.events(), { turnId: 't' })?.stubbedSeqs).toEqual(steps.flat());
  });

  it('counts earlier turns, not later ones', () => {
    const { log, steps } = bigTurn();
    log.append({ type: 'turn/end', turnId: 't', outcome: 'completed', steps: 3 });
    log.append({ type: 'turn/start', turnId: 'u', input: 'more' });
    appendStep(log, 'u', 0, { calls: [{ callId: 'u0', toolName: 'read', input: '{}', result: ok('u0', 'read', BIG) }] });
    expect(defaultCompactor.compact(log.events(), { turnId: 'u' })?.stubbedSeqs).toEqual(steps.flat());
    expect(defaultCompactor.compact(log.events(), { turnId: 't' })?.stubbedSeqs).toEqual([...steps[0]!, ...steps[1]!]);
  });

  it('ignores seqs a custom compactor offers that are not new tool results', () => {
    const { log, steps } = bigTurn();
    const resultSeq = steps[2]![0]!;
    const sloppy: Compactor = { compact: () => ({ stubbedSeqs: [1, resultSeq, resultSeq, 9_999], strategy: 'sloppy' }) };
    const first = compactAndMeasure(log, sloppy, { turnId: 't', system: 'sys' });
    expect(first).toMatchObject({ compacted: true, shrank: true });
    expect(first.event).toMatchObject({ stubbedSeqs: [resultSeq], strategy: 'sloppy' });
    expect(first.beforeChars).toBe(promptSize(projectPrompt(log.events({ to: log.lastSeq - 1 }), { system: 'sys' })));
    // Offering the same stub again is not progress.
    const seq = log.lastSeq;
    expect(compactAndMeasure(log, sloppy, { turnId: 't' })).toMatchObject({ compacted: false, shrank: false });
    expect(log.lastSeq).toBe(seq);
  });
});
