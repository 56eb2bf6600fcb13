/**
 * Issue 13.1: actors have meaningful, stable ids, each call actor is matched to its call by the
 * request in its context (the same callId as its stage events), `runCall` and `startTurn` take
 * `inspect`, and inspection events type-check without casts (this file is checked by tsc).
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { AnyEventObject, Snapshot } from 'xstate';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import {
  callOfActor,
  combineInspect,
  isSchedulerSnapshot,
  isStepSnapshot,
  isToolCallSnapshot,
  isTurnSnapshot,
  typedInspectionEvent,
  type CallStageEvent,
  type DshInspectionEvent,
  type InspectedActorRef,
} from '../../src/inspection.js';
import { settle } from '../runtime/settle.js';

function setup() {
  const clock = new ManualClock(1_000);
  const echo = defineTool({ name: 'echo', input: z.object({ text: z.string() }), isConcurrencySafe: () => true, execute: (a) => a.text });
  return { clock, rt: createRuntime({ tools: [echo], clock }) };
}

const twoSteps = (clock: ManualClock) =>
  scriptedModel(
    [
      { toolCalls: [{ toolName: 'echo', input: { text: 'a' } }, { toolName: 'echo', input: { text: 'b' } }] },
      { toolCalls: [{ toolName: 'echo', input: { text: 'c' } }] },
      { text: 'done' },
    ],
    { clock },
  );

describe('actor ids', () => {
  it('the root turn actor is the turn (id = turn id, systemId turn); its children are named step and scheduler (no systemId: they come and go with each step); calls are call-<index>', async () => {
    const { rt, clock } = setup();
    const actors: InspectedActorRef[] = [];
    const turn = rt.startTurn({
      model: twoSteps(clock),
      input: 'go',
      inspect: (ev) => {
        if (ev.type === '@xstate.actor') actors.push(ev.actorRef);
      },
    });
    expect(turn.actor.id).toBe('turn-1');
    expect(turn.actor.system.get('turn')).toBe(turn.actor);
    await settle(clock, turn.done);
    // (XState sets systemId just after it announces the actor: read once it runs.)
    const named = actors.filter((a) => a.id !== 'model').map((a) => ({ id: a.id, systemId: a.systemId, parent: a._parent?.id }));
    expect(named).toEqual([
      { id: 'turn-1', systemId: 'turn', parent: undefined },
      { id: 'step', systemId: undefined, parent: 'turn-1' },
      { id: 'scheduler', systemId: undefined, parent: 'step' },
      { id: 'call-0', systemId: undefined, parent: 'scheduler' },
      { id: 'call-1', systemId: undefined, parent: 'scheduler' },
      // the next step reuses the ids (a unique id per call would leak in XState)
      { id: 'step', systemId: undefined, parent: 'turn-1' },
      { id: 'scheduler', systemId: undefined, parent: 'step' },
      { id: 'call-0', systemId: undefined, parent: 'scheduler' },
      // a text-only step creates no scheduler
      { id: 'step', systemId: undefined, parent: 'turn-1' },
    ]);
  });

  it('a call actor is matched to its call by the request in its context: the callId of its stage events', async () => {
    const { rt, clock } = setup();
    const byActor: Array<{ actor: string; call: ReturnType<typeof callOfActor> }> = [];
    const stages: CallStageEvent[] = [];
    const turn = rt.startTurn({
      model: twoSteps(clock),
      input: 'go',
      onStage: (e) => stages.push(e),
      inspect: (ev) => {
        if (ev.type === '@xstate.actor' && ev.actorRef.id.startsWith('call-')) byActor.push({ actor: ev.actorRef.id, call: callOfActor(ev.actorRef) });
      },
    });
    await settle(clock, turn.done);
    expect(byActor).toEqual([
      { actor: 'call-0', call: { callId: 'call-1-0', toolName: 'echo', index: 0, turnId: 'turn-1', stepIndex: 0 } },
      { actor: 'call-1', call: { callId: 'call-1-1', toolName: 'echo', index: 1, turnId: 'turn-1', stepIndex: 0 } },
      { actor: 'call-0', call: { callId: 'call-2-0', toolName: 'echo', index: 0, turnId: 'turn-1', stepIndex: 1 } },
    ]);
    // Every stage event names the same call, index, turn and step as the actor's context.
    for (const { actor, call } of byActor) {
      const mine = stages.filter((e) => e.callId === call!.callId);
      expect(mine.length).toBeGreaterThan(0);
      for (const e of mine) expect({ actor: `call-${e.index}`, turnId: e.turnId, stepIndex: e.stepIndex }).toEqual({ actor, turnId: call!.turnId, stepIndex: call!.stepIndex });
    }
    expect(callOfActor(turn.actor)).toBeUndefined();
  });

  it('runCall takes inspect: its actor is call-<index> with systemId call, and its snapshots narrow to the call machine', async () => {
    const { rt } = setup();
    const seen: Array<{ id: string; value: unknown; callId: string }> = [];
    const actors = new Set<InspectedActorRef>();
    const h = rt.runCall(
      { callId: 'c9', toolName: 'echo', input: '{"text":"hi"}' },
      {
        index: 3,
        inspect: (ev) => {
          actors.add(ev.actorRef);
          if (ev.type === '@xstate.microstep' || ev.type === '@xstate.snapshot') {
            if (isToolCallSnapshot(ev.snapshot)) seen.push({ id: ev.actorRef.id, value: ev.snapshot.value, callId: ev.snapshot.context.request.callId });
          }
        },
      },
    );
    expect(h.actor.id).toBe('call-3');
    expect(h.actor.system.get('call')).toBe(h.actor);
    expect((await h.result).content).toBe('hi');
    expect([...actors].map((a) => `${a.id}/${a.systemId}`)).toEqual(['call-3/call']);
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen.map((s) => s.callId))).toEqual(new Set(['c9']));
    expect(seen.map((s) => s.value)).toContain('settled');
  });

  it('a runtime-wide inspect sees every turn and lone call, beside each one\'s own', async () => {
    const clock = new ManualClock(1_000);
    const echo = defineTool({ name: 'echo', input: z.object({ text: z.string() }), execute: (a) => a.text });
    const roots = new Set<string>();
    const own: string[] = [];
    const rt = createRuntime({ tools: [echo], clock, inspect: { next: (ev) => void (ev.type === '@xstate.actor' && !ev.actorRef._parent && roots.add(ev.actorRef.id)) } });
    await rt.runCall({ callId: 'c1', toolName: 'echo', input: '{"text":"x"}' }).result;
    const turn = rt.startTurn({ model: scriptedModel([{ text: 'hi' }], { clock }), input: 'go', inspect: (ev) => void (ev.type === '@xstate.actor' && own.push(ev.actorRef.id)) });
    await settle(clock, turn.done);
    expect([...roots]).toEqual(['call-0', 'turn-1']);
    expect(own.slice(0, 2)).toEqual(['turn-1', 'step']);
  });
});

describe('typed inspection events', () => {
  it('actorRef, event, snapshot and sourceRef type-check without casts; snapshot guards narrow to each machine', async () => {
    const { rt, clock } = setup();
    const machines = new Set<string>();
    const events = new Set<string>();
    const inspect = (ev: DshInspectionEvent) => {
      expectTypeOf(ev.actorRef.id).toEqualTypeOf<string>();
      expectTypeOf(ev.rootId).toEqualTypeOf<string>();
      switch (ev.type) {
        case '@xstate.event':
          expectTypeOf(ev.event).toEqualTypeOf<AnyEventObject>();
          expectTypeOf(ev.sourceRef?.id).toEqualTypeOf<string | undefined>();
          events.add(ev.event.type);
          break;
        case '@xstate.snapshot':
          expectTypeOf(ev.snapshot).toEqualTypeOf<Snapshot<unknown>>();
          if (isTurnSnapshot(ev.snapshot)) machines.add(`turn:${ev.snapshot.context.turnId}`);
          if (isStepSnapshot(ev.snapshot)) machines.add(`step:${ev.snapshot.context.stepIndex}`);
          if (isSchedulerSnapshot(ev.snapshot)) machines.add('scheduler');
          if (isToolCallSnapshot(ev.snapshot)) machines.add(`call:${ev.snapshot.context.request.callId}`);
          break;
      }
    };
    const turn = rt.startTurn({ model: twoSteps(clock), input: 'go', inspect });
    await settle(clock, turn.done);
    expect([...machines].sort()).toEqual(['call:call-1-0', 'call:call-1-1', 'call:call-2-0', 'scheduler', 'step:0', 'step:1', 'step:2', 'turn:turn-1']);
    expect(events).toContain('START');
  });

  it('typedInspectionEvent types a raw XState event; combineInspect feeds listeners and observers', () => {
    const got: string[] = [];
    const both = combineInspect(
      (ev) => got.push(`fn:${ev.actorRef.id}`),
      undefined,
      { next: (ev) => got.push(`obs:${ev.actorRef.id}`) },
    );
    const { rt } = setup();
    rt.runCall({ callId: 'c1', toolName: 'echo', input: '{"text":"x"}' }, { inspect: both });
    expect(got).toContain('fn:call-0');
    expect(got).toContain('obs:call-0');
    expect(combineInspect(undefined, undefined)).toBeUndefined();
    const only = (ev: DshInspectionEvent) => void ev;
    expect(combineInspect(only)).toBe(only);
    rt.runCall({ callId: 'c2', toolName: 'echo', input: '{"text":"x"}' }).actor.system.inspect({
      next: (raw) => {
        const ev = typedInspectionEvent(raw);
        expectTypeOf(ev.actorRef.id).toEqualTypeOf<string>();
      },
    });
  });
});
