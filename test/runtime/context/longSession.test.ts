/**
 * Issue 16.2: a prompt that fits forever. A runtime given a context window keeps every request
 * inside it for a 1,000-turn session: older tool results are stubbed, then whole old turns fold
 * into a summary; each reduction is a `context/compacted` event, so the prompt re-projected from
 * the log alone (a resumed session) is exactly what the model was sent.
 */
import { APICallError, type LanguageModelV3Prompt } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel, type ScriptedStep } from '../../../src/adapters/model/index.js';
import type { LogEventOf } from '../../../src/protocol/index.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { createMemoryLog } from '../../../src/runtime/log/sessionLog.js';
import { projectPrompt } from '../../../src/runtime/projection/prompt.js';
import { promptSize } from '../../../src/runtime/projection/promptSize.js';
import { SUMMARY_PREFIX } from '../../../src/runtime/projection/compactedText.js';

const WINDOW = 20_000;
const OUTPUT = 'x'.repeat(1_500);

/** What a provider says when the prompt is over its window. */
function overflow(size: number) {
  return new APICallError({
    message: `prompt is too long: ${size} > ${WINDOW}`,
    url: 'http://loopback/v1/messages',
    requestBodyValues: {},
    statusCode: 400,
    isRetryable: false,
  });
}

/**
 * A model with a hard window: a prompt over it fails as a real provider does. A new turn's first
 * request calls `work`; once the result is there it answers in text.
 */
function windowedModel(requests: number, sizes: number[]) {
  const step: ScriptedStep = ({ prompt }) => {
    const size = promptSize(prompt);
    sizes.push(size);
    if (size > WINDOW) return { error: overflow(size) };
    const last = prompt.at(-1)!;
    if (last.role === 'user') return { text: `Working on it. `.repeat(4), toolCalls: [{ toolName: 'work', input: { n: sizes.length } }] };
    return { text: `Done: the work produced ${OUTPUT.length} characters. `.repeat(3) };
  };
  return scriptedModel(Array.from({ length: requests }, () => step));
}

const work = defineTool({ name: 'work', input: z.object({ n: z.number() }), isConcurrencySafe: () => true, execute: () => OUTPUT });

describe('a session of 1,000 turns in a 20,000-char window', () => {
  it('never sends a request over the window, never fails a turn, and every reduction is logged and persistent', async () => {
    const sizes: number[] = [];
    const model = windowedModel(2_100, sizes);
    const rt = createRuntime({ tools: [work], contextWindow: { maxChars: WINDOW } });
    for (let i = 1; i <= 1_000; i++) {
      const result = await rt.startTurn({ model, input: `Task ${i}: run the work tool and report. ${'context '.repeat(20)}`, system: 'You are terse.' }).done;
      if (result.outcome !== 'completed') throw new Error(`turn ${i} ended ${result.outcome}`);
    }
    const events = rt.log.events();
    // Every request fit: the model never said "too long", and nothing was retried.
    expect(Math.max(...sizes)).toBeLessThanOrEqual(WINDOW);
    expect(events.filter((e) => e.type === 'agent/request-error')).toEqual([]);
    expect(model.calls).toHaveLength(2_000);

    const compactions = events.filter((e): e is LogEventOf<'context/compacted'> => e.type === 'context/compacted');
    const folds = compactions.filter((e) => e.foldedTurnIds?.length);
    expect(folds.length).toBeGreaterThan(5);
    for (const e of compactions) expect(e.afterChars).toBeLessThan(e.beforeChars);
    // Folds go oldest first and never fold a turn twice.
    const foldedOrder = folds.flatMap((e) => e.foldedTurnIds!);
    expect(new Set(foldedOrder).size).toBe(foldedOrder.length);
    expect(foldedOrder.slice(0, 3)).toEqual(['turn-1', 'turn-2', 'turn-3']);
    // The summary is bounded however long the session: the default cap is 15 % of the window.
    for (const e of folds) expect(e.summary!.length).toBeLessThanOrEqual(WINDOW * 0.15);

    // Persistent: the last request's prompt is the log's projection, in this log and in a resumed copy.
    const lastPrompt = model.calls.at(-1)!.prompt;
    const projection = { system: 'You are terse.', turnId: 'turn-1000' };
    // (The log's projection also holds the answer to that last request: its final message.)
    expect(projectPrompt(events, projection).slice(0, -1)).toEqual(stripProviderMetadata(lastPrompt));
    const resumed = createMemoryLog({ initial: events });
    expect(projectPrompt(resumed.events(), projection)).toEqual(projectPrompt(events, projection));
    // What the model sees of the folded turns: one summary message after the system prompt.
    const summary = lastPrompt[1]!;
    expect(summary.role).toBe('user');
    expect(JSON.stringify(summary.content)).toContain(JSON.stringify(SUMMARY_PREFIX).slice(1, 30));
  }, 600_000);
});

function stripProviderMetadata(prompt: LanguageModelV3Prompt): LanguageModelV3Prompt {
  return JSON.parse(JSON.stringify(prompt)) as LanguageModelV3Prompt;
}
