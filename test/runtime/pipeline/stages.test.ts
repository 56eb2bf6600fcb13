/**
 * The call machine's states read as the pipeline stages, in SPEC order (SPEC §2, §7), and a person
 * watching a call sees where it is: every stage it passes, and `awaitingApproval` while it waits.
 */
import { describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { toolCallMachine } from '../../../machines/toolCall.js';
import { ErrorCode, type ApprovalAnswer, type ToolCallRequest } from '../../../src/protocol/index.js';
import { echoTool, expectOk, flushMicrotasks, setup } from './harness.js';

const STAGES = ['validating', 'preExecute', 'awaitingApproval', 'guard', 'executing', 'postExecute', 'finalizing', 'settled'];
/**
 * The state a stage moves to while it waits for a listener (or, for `executing`, while its body is
 * being aborted): a sibling right after the stage, not a nested state (issue 17: nesting costs a
 * share of every microstep of every call).
 */
const WAITING: Record<string, string> = { preExecute: 'preExecuteWaiting', executing: 'aborting', postExecute: 'postExecuteWaiting' };

/** Runs a call on its own actor and records every top-level state it passes through, in order. */
async function walk(rt: ReturnType<typeof setup>['rt'], request: ToolCallRequest) {
  const path: string[] = [];
  const note = (value: unknown) => {
    const top = typeof value === 'string' ? value : Object.keys(value as object)[0]!;
    if (path.at(-1) !== top) path.push(top);
  };
  const actor = createActor(toolCallMachine, {
    input: { request, where: { index: 0 }, pipeline: rt.pipeline },
    clock: rt.clock,
    inspect: (ev) => {
      if (ev.type === '@xstate.microstep' || ev.type === '@xstate.snapshot') note((ev as unknown as { snapshot: { value: unknown } }).snapshot.value);
    },
  });
  const done = toPromise(actor);
  actor.start();
  return { path, actor, done };
}

describe('the toolCall machine', () => {
  it('has one state per pipeline stage, in the order of SPEC §2, each waiting state right after its stage, and nothing nested', () => {
    expect(Object.keys(toolCallMachine.states)).toEqual(STAGES.flatMap((s) => (WAITING[s] ? [s, WAITING[s]] : [s])));
    for (const node of Object.values(toolCallMachine.states)) expect(Object.keys(node.states)).toEqual([]);
    expect(toolCallMachine.states.settled!.type).toBe('final');
  });

  it('a call that uses every stage passes through all of them, in order', async () => {
    const { tool } = echoTool();
    let answer!: (a: ApprovalAnswer) => void;
    const { rt } = setup({ tools: [tool], approval: { request: () => new Promise((res) => (answer = res)) } });
    rt.hooks.on('tools/pre-execute', 'ask', () => ({ kind: 'ask' }));
    rt.tools.guard(() => undefined, 'guard');
    rt.hooks.on('tools/post-execute', 'post', () => ({ kind: 'accept' }));
    const { path, actor, done } = await walk(rt, { callId: 'c1', toolName: 'echo', input: '{"text":"hi"}' });
    await flushMicrotasks();
    expect(actor.getSnapshot().value).toBe('awaitingApproval');
    answer('allowed-once');
    const r = await done;
    expect(r).toMatchObject({ isError: false, content: 'hi' });
    expect(path.filter((s) => s !== 'validating')).toEqual(STAGES.slice(1));
  });

  it('a subscriber to a running call sees it wait in awaitingApproval, then move on', async () => {
    const { tool } = echoTool();
    let answer!: (a: ApprovalAnswer) => void;
    const { rt, call } = setup({ tools: [tool], approval: { request: () => new Promise((res) => (answer = res)) } });
    rt.hooks.on('tools/pre-execute', 'ask', async () => ({ kind: 'ask', reason: 'check' }));
    const h = call('echo', { text: 'hi' });
    const seen: unknown[] = [];
    h.actor.subscribe((s) => seen.push(s.value));
    await flushMicrotasks();
    expect(seen).toEqual(['awaitingApproval']);
    answer('allowed-once');
    expectOk(rt, await h.result, 'hi');
    expect(seen.at(-1)).toBe('settled');
  });

  it('a denied call leaves through finalizing; it never throws out of the actor', async () => {
    const { tool } = echoTool();
    const { rt } = setup({ tools: [tool] });
    rt.hooks.on('tools/pre-execute', 'deny', () => ({ kind: 'deny', reason: 'no' }));
    const { path, actor, done } = await walk(rt, { callId: 'c1', toolName: 'echo', input: '{"text":"hi"}' });
    const r = await done;
    expect(r.error?.code).toBe(ErrorCode.POLICY_DENIED);
    expect(actor.getSnapshot().status).toBe('done');
    expect(path.slice(-3)).toEqual(['preExecute', 'finalizing', 'settled']);
  });

  it('a deny from a port that names no listener settles POLICY_DENIED with no decision provenance (nobody is named as the decider)', async () => {
    const { tool } = echoTool();
    const { rt } = setup({ tools: [tool] });
    const pipeline = { ...rt.pipeline, hasPreExecute: () => true, preExecute: () => ({ kind: 'deny' as const, reason: 'no' }) };
    const actor = createActor(toolCallMachine, { input: { request: { callId: 'c1', toolName: 'echo', input: '{"text":"hi"}' }, where: { index: 0 }, pipeline }, clock: rt.clock });
    const done = toPromise(actor);
    actor.start();
    const r = await done;
    expect(r.error).toMatchObject({ code: ErrorCode.POLICY_DENIED, message: 'denied by policy: no' });
    expect(r).not.toHaveProperty('decision');
  });

  it('an invalid call goes straight from validating to finalizing', async () => {
    const { tool } = echoTool();
    const { rt } = setup({ tools: [tool] });
    rt.hooks.on('tools/pre-execute', 'never-consulted', () => ({ kind: 'allow' }));
    const { path, done } = await walk(rt, { callId: 'c1', toolName: 'nope', input: '{}' });
    expect((await done).error?.code).toBe(ErrorCode.UNKNOWN_TOOL);
    expect(path.filter((s) => s !== 'validating')).toEqual(['finalizing', 'settled']);
  });
});
