/** The typed readers of inspected snapshots (machines/snapshotSelectors.ts), on a real turn's inspection. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { stepSnapshotOf, toolCallSnapshotOf, turnSnapshotOf } from '../../machines/snapshotSelectors.js';
import { scriptedModel } from '../../src/adapters/model/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';

describe('snapshot selectors', () => {
  it('each names its own machine’s snapshots (turn, step index, the call’s request) and nothing else', async () => {
    const echo = defineTool({ name: 'echo', input: z.object({ text: z.string() }), isConcurrencySafe: () => true, execute: async ({ text }) => text });
    const rt = createRuntime({ tools: [echo] });
    const seen = { turn: new Set<string>(), step: new Set<string>(), call: new Set<string>(), other: 0 };
    const turn = rt.startTurn({
      input: 'go',
      model: scriptedModel([{ toolCalls: [{ toolName: 'echo', input: { text: 'a' }, toolCallId: 'c1' }] }, { text: 'done' }]),
      inspect: (ev) => {
        if (ev.type !== '@xstate.snapshot') return;
        const t = turnSnapshotOf(ev.snapshot);
        const s = stepSnapshotOf(ev.snapshot);
        const c = toolCallSnapshotOf(ev.snapshot);
        expect([t, s, c].filter(Boolean).length).toBeLessThanOrEqual(1);
        if (t) seen.turn.add(`${t.turnId}:${JSON.stringify(t.value)}`);
        else if (s) seen.step.add(`${s.turnId}/${s.stepIndex}`);
        else if (c) seen.call.add(`${c.request.callId}:${c.request.toolName}:${c.request.input}:${JSON.stringify(c.value)}`);
        else seen.other++;
      },
    });
    await turn.done;
    expect([...seen.turn].every((k) => k.startsWith(`${turn.turnId}:`))).toBe(true);
    expect(seen.turn.size).toBeGreaterThan(0);
    expect([...seen.step]).toEqual([`${turn.turnId}/0`, `${turn.turnId}/1`]);
    expect([...seen.call].at(-1)).toBe('c1:echo:{"text":"a"}:"settled"');
    expect(seen.other).toBeGreaterThan(0); // the scheduler, the model stream
    for (const v of [undefined, null, 7, 'toolCall', {}, { machine: { id: 'toolCall' } }, { machine: { id: 'toolCall' }, context: { request: { callId: 3 } } }]) {
      expect([turnSnapshotOf(v), stepSnapshotOf(v), toolCallSnapshotOf(v)]).toEqual([undefined, undefined, undefined]);
    }
  });
});

describe('snapshot selectors on hostile or partial snapshots (what an inspector may be handed)', () => {
  const snap = (id: string, context: unknown) => ({ machine: { id }, value: 'x', context });

  it('a snapshot of the right machine without a usable context is none of them, never a throw', () => {
    for (const context of [undefined, null, 'text', 5]) {
      expect(turnSnapshotOf(snap('turn', context))).toBeUndefined();
      expect(stepSnapshotOf(snap('step', context))).toBeUndefined();
      expect(toolCallSnapshotOf(snap('toolCall', context))).toBeUndefined();
    }
  });

  it('each reader needs every field it hands out, with its type', () => {
    expect(turnSnapshotOf(snap('turn', {}))).toBeUndefined();
    expect(turnSnapshotOf(snap('turn', { turnId: 5 }))).toBeUndefined();
    expect(turnSnapshotOf(snap('turn', { turnId: 't1' }))).toEqual({ turnId: 't1', value: 'x' });
    expect(stepSnapshotOf(snap('step', { turnId: 't1' }))).toBeUndefined();
    expect(stepSnapshotOf(snap('step', { stepIndex: 0 }))).toBeUndefined();
    expect(stepSnapshotOf(snap('step', { turnId: 't1', stepIndex: '0' }))).toBeUndefined();
    expect(stepSnapshotOf(snap('step', { turnId: 't1', stepIndex: 0 }))).toEqual({ turnId: 't1', stepIndex: 0, value: 'x' });
    expect(toolCallSnapshotOf(snap('toolCall', {}))).toBeUndefined();
    expect(toolCallSnapshotOf(snap('toolCall', { request: { callId: 'c1' } }))).toBeUndefined();
    expect(toolCallSnapshotOf(snap('toolCall', { request: { toolName: 'echo' } }))).toBeUndefined();
    expect(toolCallSnapshotOf(snap('toolCall', { request: { callId: 'c1', toolName: 'echo' } }))).toEqual({ request: { callId: 'c1', toolName: 'echo' }, value: 'x' });
    expect(toolCallSnapshotOf(snap('turn', { request: { callId: 'c1', toolName: 'echo' } }))).toBeUndefined();
  });
});
