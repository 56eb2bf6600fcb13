/**
 * A steer is never lost (SPEC §9.2), also when the turn suspends (§9.4): a steer sent while the
 * step's approval is pending, after which the turn suspends, belongs to the suspended turn's next
 * model request, which comes after `resumeTurn`. It is logged (`user/steer` for that request's step)
 * when the turn suspends, so the log carries it to whichever process resumes the session; a steer
 * sent to the handle of a turn that is already suspended goes the same way.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import { scriptedModel } from '../../../src/adapters/model/index.js';
import type { ApprovalAnswer, LogEvent } from '../../../src/protocol/index.js';
import { createMemoryLog } from '../../../src/runtime/log/sessionLog.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import type { ApprovalService, SUSPEND } from '../../../src/runtime/pipeline/approvalService.js';
import { flushMicrotasks } from '../../../src/runtime/clock.js';

const run = defineTool({ name: 'run', input: z.object({ cmd: z.string() }), execute: async (a) => `ran ${a.cmd}` });

/** An approval service whose answers the test gives by hand. */
function manualApproval() {
  const pending: Array<(a: ApprovalAnswer | typeof SUSPEND) => void> = [];
  const service: ApprovalService = { request: () => new Promise<ApprovalAnswer | typeof SUSPEND>((r) => pending.push(r)) };
  return { service, pending };
}

function runtimeOn(events: readonly LogEvent[], approval: ApprovalService) {
  const rt = createRuntime({ log: createMemoryLog({ initial: events.map((e) => structuredClone(e)) }), tools: [run], approval });
  rt.hooks.on('tools/pre-execute', 'ask', () => ({ kind: 'ask', reason: 'may I run?' }));
  return rt;
}

/** The user messages of a prompt, in order. */
const userTexts = (prompt: LanguageModelV3Prompt) =>
  prompt.flatMap((m) => (m.role === 'user' ? m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])) : []));

/** Where the steer sits in the prompt: after the suspended step's tool result. */
const roles = (prompt: LanguageModelV3Prompt) => prompt.map((m) => m.role);

const answering = (answer: ApprovalAnswer | typeof SUSPEND): ApprovalService => ({ request: async () => answer });

describe('a steer across a suspension (issue 22)', () => {
  it('sent while the approval is pending, then the turn suspends: logged, and in the first request after resumeTurn', async () => {
    const { service, pending } = manualApproval();
    const rt = runtimeOn([], service);
    const model1 = scriptedModel([{ toolCalls: [{ toolName: 'run', input: { cmd: 'make' }, toolCallId: 'c1' }] }]);
    const turn = rt.startTurn({ model: model1, input: 'build it' });
    await flushMicrotasks();
    expect(pending).toHaveLength(1);
    const steered = turn.steer('and run the tests too');
    pending[0]!('suspend');
    const first = await turn.done;
    expect(first.outcome).toBe('suspended');
    // The steer settled with the suspension: it belongs to the turn's next request, step 1.
    const outcome = await steered;
    expect(outcome).toMatchObject({ delivered: 'steer', stepIndex: 1 });
    const log1 = rt.log.events();
    const steer = log1.filter((e) => e.type === 'user/steer');
    expect(steer).toMatchObject([{ turnId: 'turn-1', stepIndex: 1, text: 'and run the tests too' }]);
    expect(outcome.delivered === 'steer' && outcome.seq).toBe(steer[0]!.seq);
    // The suspension is still pending (the steer does not answer it), and no other turn started.
    expect(rt.pendingSuspension()?.turnId).toBe('turn-1');
    expect(log1.filter((e) => e.type === 'turn/start')).toHaveLength(1);

    // Another process resumes from the log alone.
    const rt2 = runtimeOn(log1, answering('allowed-once'));
    const model2 = scriptedModel([{ text: 'built and tested' }]);
    const second = await rt2.resumeTurn({ model: model2 }).done;
    expect(second).toMatchObject({ turnId: 'turn-1', outcome: 'completed', text: 'built and tested' });
    expect(model2.calls).toHaveLength(1);
    const prompt = model2.calls[0]!.prompt;
    expect(userTexts(prompt)).toEqual(['build it', 'and run the tests too']);
    // After the suspended step's call and its result.
    expect(roles(prompt).slice(-3)).toEqual(['assistant', 'tool', 'user']);
    // Logged once; no follow-up turn was made of it.
    const all = rt2.log.events();
    expect(all.filter((e) => e.type === 'user/steer')).toHaveLength(1);
    expect(all.filter((e) => e.type === 'turn/start')).toHaveLength(1);
  });

  it('resumed in the same runtime: the steer reaches the next request', async () => {
    const { service, pending } = manualApproval();
    const rt = runtimeOn([], service);
    const turn = rt.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'run', input: { cmd: 'make' }, toolCallId: 'c1' }] }]), input: 'build it' });
    await flushMicrotasks();
    const steered = turn.steer('use the release profile');
    pending[0]!('suspend');
    expect((await turn.done).outcome).toBe('suspended');
    expect(await steered).toMatchObject({ delivered: 'steer', stepIndex: 1 });
    const model2 = scriptedModel([{ text: 'done' }]);
    const resumed = rt.resumeTurn({ model: model2 });
    await flushMicrotasks();
    pending[1]!('allowed-once');
    expect((await resumed.done).outcome).toBe('completed');
    expect(userTexts(model2.calls[0]!.prompt)).toEqual(['build it', 'use the release profile']);
  });

  it('sent to the handle of a turn that is already suspended: logged for its next request, never dropped', async () => {
    const rt = runtimeOn([], answering('suspend'));
    const turn = rt.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'run', input: { cmd: 'make' }, toolCallId: 'c1' }] }]), input: 'build it' });
    expect((await turn.done).outcome).toBe('suspended');
    expect(await turn.steer('skip the docs')).toMatchObject({ delivered: 'steer', stepIndex: 1 });
    expect(rt.log.events().filter((e) => e.type === 'user/steer')).toMatchObject([{ stepIndex: 1, text: 'skip the docs' }]);
    expect(rt.log.events().filter((e) => e.type === 'turn/start')).toHaveLength(1);
    const rt2 = runtimeOn(rt.log.events(), answering('allowed-once'));
    const model2 = scriptedModel([{ text: 'done' }]);
    expect((await rt2.resumeTurn({ model: model2 }).done).outcome).toBe('completed');
    expect(userTexts(model2.calls[0]!.prompt)).toEqual(['build it', 'skip the docs']);
  });
});
