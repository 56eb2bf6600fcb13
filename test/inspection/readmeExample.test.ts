// The README's "Watching calls" example, in behaviour: if this fails, the README is lying.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineTool } from '../../src/index.js';
import type { CallStageEvent, DshInspectionEvent } from '../../src/inspection.js';
import { scriptedModel } from '../../src/testing/index.js';

describe('README: watching calls', () => {
  it('rt.onStage, startTurn({ onStage }), turn.onStage and runCall({ onStage, inspect }) all hear the stages', async () => {
    const read = defineTool({ name: 'read', description: 'Read a file', input: z.object({ path: z.string() }), execute: async ({ path }) => `contents of ${path}` });
    const rt = createRuntime({ tools: [read] });
    const lines: string[] = [];
    const stop = rt.onStage((e) => {
      if (e.type === 'stage/exited') lines.push(`${e.callId} ${e.stage} ${e.outcome.kind} ${e.outcome.code ?? ''}`.trim());
    });
    const model = scriptedModel([{ toolCalls: [{ toolName: 'read', input: { path: 'a.txt' } }] }, { text: 'Done.' }]);
    const fromOption: CallStageEvent[] = [];
    const fromHandle: CallStageEvent[] = [];
    const turn = rt.startTurn({ model, input: 'read a.txt', onStage: (e) => fromOption.push(e) });
    turn.onStage((e) => fromHandle.push(e));
    expect((await turn.done).outcome).toBe('completed');
    expect(lines).toEqual(['call-1-0 validating valid', 'call-1-0 executing ok', 'call-1-0 finalizing ok']);
    expect(fromOption).toHaveLength(6);
    expect(fromHandle).toEqual(fromOption);

    const lone: CallStageEvent[] = [];
    const inspected: DshInspectionEvent[] = [];
    const r = await rt.runCall({ callId: 'c1', toolName: 'read', input: '{"path":1}' }, { onStage: (e) => lone.push(e), inspect: (ev) => inspected.push(ev) }).result;
    expect(r.error?.code).toBe('INVALID_ARGS');
    expect(lines.slice(3)).toEqual(['c1 validating invalid INVALID_ARGS', 'c1 finalizing error INVALID_ARGS']);
    expect(lone.map((e) => e.type)).toEqual(['stage/entered', 'stage/exited', 'stage/entered', 'stage/exited']);
    expect(inspected.some((ev) => ev.actorRef.id === 'call-0')).toBe(true);
    stop();
    await rt.runCall({ callId: 'c2', toolName: 'read', input: '{"path":"b"}' }).result;
    expect(lines).toHaveLength(5);
  });
});
