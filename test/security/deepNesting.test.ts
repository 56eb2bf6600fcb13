/**
 * Issue 10.6: one hostile call must not poison the session. A tool call whose raw input is
 * 10,000 levels of nested brackets is rejected `INVALID_ARGS`; the prompt projection (and every
 * other reader of raw model JSON: compaction, the text view) must then carry it as text within the
 * same limits, so the next request, later turns and a resumed session all go on.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/index.js';
import { openJsonlSessionLog } from '../../src/adapters/log/jsonlLog.js';
import { ErrorCode, type LogEvent } from '../../src/protocol/index.js';
import { readBoundedJson } from '../../src/runtime/args.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { compactAndMeasure, stubOlderToolResults } from '../../src/runtime/context/compaction.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { projectPrompt } from '../../src/runtime/projection/prompt.js';
import { promptSize } from '../../src/runtime/projection/promptSize.js';
import { formatLog } from '../../src/protocol/logText.js';
import { tempDir } from '../adapters/workspaceFixture.js';
import { settle } from '../runtime/settle.js';

const DEPTH = 10_000;
const deep = '['.repeat(DEPTH) + ']'.repeat(DEPTH);
const deepObject = '{"a":'.repeat(DEPTH) + '1' + '}'.repeat(DEPTH);

function echoTool() {
  return defineTool({
    name: 'echo',
    input: z.object({ text: z.string() }).or(z.array(z.unknown())),
    isConcurrencySafe: () => true,
    execute: async (a) => JSON.stringify(a).slice(0, 40),
  });
}

const toolCallInputs = (prompt: ReturnType<typeof projectPrompt>) =>
  prompt.flatMap((m) => (m.role === 'assistant' ? m.content.flatMap((p) => (p.type === 'tool-call' ? [p.input] : [])) : []));

describe('deep nesting in a tool call (issue 10.6)', () => {
  it('is INVALID_ARGS, and the same turn, a later turn and the text view all go on', async () => {
    const clock = new ManualClock();
    const rt = createRuntime({ tools: [echoTool()], clock });
    const model = scriptedModel(
      [
        { toolCalls: [{ toolName: 'echo', input: deep }, { toolName: 'echo', input: deepObject }] },
        { toolCalls: [{ toolName: 'echo', input: { text: 'after' } }] },
        { text: 'first turn done' },
        { text: 'second turn done' },
      ],
      { clock },
    );
    const first = await settle(clock, rt.startTurn({ model, input: 'go' }).done);
    expect(first).toMatchObject({ outcome: 'completed', steps: 3 });
    const results = rt.log.events().filter((e): e is Extract<LogEvent, { type: 'tool/result' }> => e.type === 'tool/result');
    expect(results.map((r) => r.result.error?.code ?? 'ok')).toEqual([ErrorCode.INVALID_ARGS, ErrorCode.INVALID_ARGS, 'ok']);
    expect(results[0]!.result.content).toMatch(/nested deeper than 64/);

    const second = await settle(clock, rt.startTurn({ model, input: 'and again' }).done);
    expect(second).toMatchObject({ outcome: 'completed', steps: 1 });
    expect(model.calls).toHaveLength(4);
    // The model saw the invalid inputs as the raw text they were, not as a parsed 10,000-deep value.
    const inputs = toolCallInputs(model.calls[3]!.prompt);
    expect(inputs.slice(0, 2)).toEqual([deep, deepObject]);
    expect(inputs[2]).toEqual({ text: 'after' });

    // Other readers of the raw JSON: the size measure, compaction and the text view.
    const prompt = projectPrompt(rt.log.events());
    expect(promptSize(prompt)).toBeGreaterThan(deep.length);
    expect(() => compactAndMeasure(rt.log, stubOlderToolResults({ keepRecentSteps: 0 }), { turnId: 'turn-2' })).not.toThrow();
    expect(formatLog(rt.log.events())).toContain('tool/call');
  });

  it('a resumed session (the JSONL log replayed into a new runtime) goes on', async () => {
    const path = join(await tempDir('dsh-deep-'), 'session.jsonl');
    // The real clock: a JSONL log's fsync is real I/O, and fake time jumping past it would fire
    // the per-call deadline while the body waits for its tool/call to be durable.
    {
      const { log, sink } = await openJsonlSessionLog(path);
      const rt = createRuntime({ tools: [echoTool()], log });
      const model = scriptedModel([{ toolCalls: [{ toolName: 'echo', input: deep }] }, { text: 'ok' }]);
      expect(await rt.startTurn({ model, input: 'go' }).done).toMatchObject({ outcome: 'completed' });
      await sink.close();
    }
    const { log, sink } = await openJsonlSessionLog(path);
    const rt = createRuntime({ tools: [echoTool()], log });
    const model = scriptedModel([{ toolCalls: [{ toolName: 'echo', input: { text: 'resumed' } }] }, { text: 'resumed fine' }]);
    const out = await rt.startTurn({ model, input: 'resume' }).done;
    await sink.close();
    expect(out).toMatchObject({ turnId: 'turn-2', outcome: 'completed', steps: 2 });
    expect(toolCallInputs(model.calls[0]!.prompt)).toEqual([deep]);
    const last = rt.log.events().filter((e) => e.type === 'tool/result').at(-1);
    expect(last?.type === 'tool/result' && last.result.isError).toBe(false);
  });

  it('the bounded reader counts only real nesting: brackets inside strings and escapes do not count', () => {
    const inString = JSON.stringify({ text: '['.repeat(500) + '\\"{{{' });
    expect(readBoundedJson(inString)).toEqual({ ok: true, value: JSON.parse(inString) });
    expect(readBoundedJson('['.repeat(64) + ']'.repeat(64)).ok).toBe(true);
    expect(readBoundedJson('['.repeat(65) + ']'.repeat(65))).toEqual({ ok: false, reason: 'arguments are nested deeper than 64 levels' });
    expect(readBoundedJson('{"a": "cut')).toMatchObject({ ok: false, reason: expect.stringMatching(/not valid JSON/) });
  });
});
