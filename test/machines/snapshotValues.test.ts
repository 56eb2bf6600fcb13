/**
 * Issue 22 item 2: snapshots are values. Every snapshot the actors of a turn emit (turn, step,
 * scheduler, calls) is kept and serialised twice: when it was emitted, and when the session has
 * ended. A UI that keeps snapshots (an `@xstate/react` selector, an inspector with history) sees
 * each moment as it was only if the two are equal for every snapshot.
 *
 * The turn has what makes bookkeeping move: eight parallel reads, a write that asks for approval,
 * a steer while that approval is pending, a suspension on it and a resume (a second runtime on the
 * log) whose answer arrives later, with a second steer meanwhile, then a text answer.
 *
 * What the serialisation skips, because the issue allows it to stay a reference: the injected
 * services (`deps`, `pipeline`, `log`, `model`, `clock`, a prepared call's tool definition) and
 * handles whose identity never changes (functions, abort controllers, actor refs: recorded by kind
 * and id, not walked). Everything else is walked: plain objects, arrays, class instances' own
 * fields, maps and sets, with cycles marked.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { InspectionEvent } from 'xstate';
import { scriptedModel } from '../../src/adapters/model/index.js';
import type { ApprovalAnswer, LogEvent } from '../../src/protocol/index.js';
import { createMemoryLog } from '../../src/runtime/log/sessionLog.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { SUSPEND, type ApprovalService } from '../../src/runtime/index.js';

/** Injected services and definitions: references by contract (issue 22 item 2). */
const SERVICE_KEYS = new Set(['deps', 'pipeline', 'log', 'model', 'clock', 'tool', 'tools', 'closeCrashedStep']);

/** A snapshot as a UI could read it: status, state value, context, output, error and its children's ids. */
function serialise(snapshot: unknown): string {
  const s = snapshot as { status?: unknown; value?: unknown; context?: unknown; output?: unknown; error?: unknown; children?: Record<string, unknown> };
  return JSON.stringify(walk({ status: s.status, value: s.value, context: s.context, output: s.output, error: s.error, children: Object.keys(s.children ?? {}) }, new Set(), 0));
}

function walk(value: unknown, path: Set<object>, depth: number): unknown {
  if (value === null || typeof value !== 'object') return typeof value === 'function' ? '[function]' : typeof value === 'bigint' ? String(value) : value;
  if (typeof AbortController !== 'undefined' && (value instanceof AbortController || value instanceof AbortSignal)) return '[abort handle]';
  const ref = value as { send?: unknown; getSnapshot?: unknown; id?: unknown };
  if (typeof ref.send === 'function' && typeof ref.getSnapshot === 'function') return `[actor ${String(ref.id)}]`;
  if (path.has(value)) return '[cycle]';
  if (depth > 40) return '[deep]';
  path.add(value);
  try {
    if (Array.isArray(value)) return value.map((v) => walk(v, path, depth + 1));
    if (value instanceof Map) return { map: [...value].map(([k, v]) => [walk(k, path, depth + 1), walk(v, path, depth + 1)]) };
    if (value instanceof Set) return { set: [...value].map((v) => walk(v, path, depth + 1)) };
    const out: Record<string, unknown> = {};
    // Own fields, enumerable or not (a class may keep its state in non-enumerable ones).
    for (const key of Object.getOwnPropertyNames(value)) {
      if (SERVICE_KEYS.has(key)) continue;
      out[key] = walk((value as Record<string, unknown>)[key], path, depth + 1);
    }
    return out;
  } finally {
    path.delete(value);
  }
}

function tools() {
  const read = defineTool({
    name: 'read',
    input: z.object({ path: z.string() }),
    isConcurrencySafe: () => true,
    execute: async (a) => `contents of ${a.path}`,
  });
  const write = defineTool({
    name: 'write',
    input: z.object({ path: z.string(), text: z.string() }),
    execute: async (a) => `wrote ${a.text.length} chars to ${a.path}`,
  });
  return [read, write];
}

function runtimeOn(events: readonly LogEvent[], approval: ApprovalService) {
  const rt = createRuntime({ log: createMemoryLog({ initial: events.map((e) => structuredClone(e)) }), tools: tools(), approval, concurrency: 4 });
  rt.hooks.on('tools/pre-execute', 'ask', (call, next) => (call.toolName === 'write' ? { kind: 'ask', reason: 'writes a file' } : next()));
  return rt;
}

interface Kept {
  readonly actor: string;
  readonly snapshot: unknown;
  readonly atEmission: string;
}

function keeper(kept: Kept[]) {
  return (ev: InspectionEvent) => {
    if (ev.type === '@xstate.snapshot') kept.push({ actor: String((ev.actorRef as { id?: unknown }).id), snapshot: ev.snapshot, atEmission: serialise(ev.snapshot) });
  };
}

/** The turn's lifecycle machines (and their steering child) are a system of their own: kept too, when the runtime has them. */
function watchLifecycle(handle: object, kept: Kept[]): void {
  const lifecycle = (handle as { lifecycle?: { getSnapshot(): unknown; system: { inspect(f: (ev: InspectionEvent) => void): unknown }; id: string } }).lifecycle;
  if (!lifecycle) return;
  const now = lifecycle.getSnapshot();
  kept.push({ actor: lifecycle.id, snapshot: now, atEmission: serialise(now) });
  lifecycle.system.inspect(keeper(kept));
}

const tick = () => new Promise((r) => setTimeout(r, 0));
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await tick();
  expect(cond()).toBe(true);
}

describe('snapshots are values (issue 22 item 2)', () => {
  it('no snapshot a turn emitted changes afterwards: parallel calls, an approval, steers, a suspension and a resume', async () => {
    const kept: Kept[] = [];
    const reads = Array.from({ length: 8 }, (_, i) => ({ toolName: 'read', input: { path: `f${i}.txt` }, toolCallId: `r${i}` }));
    const write = { toolName: 'write', input: { path: 'out.txt', text: 'hello' }, toolCallId: 'w1' };

    // The first runtime: the write's question suspends the turn; a steer is sent while it is pending.
    let asked!: () => void;
    const questionAsked = new Promise<void>((r) => (asked = r));
    const suspending: ApprovalService = {
      request: async () => {
        asked();
        await tick();
        return SUSPEND;
      },
    };
    const first = runtimeOn([], suspending);
    const turn = first.startTurn({ model: scriptedModel([{ toolCalls: [...reads, write] }, { text: 'unused' }]), input: 'read them all, then write', inspect: keeper(kept) });
    watchLifecycle(turn, kept);
    await questionAsked;
    void turn.steer('mention the sizes').catch(() => undefined);
    expect((await turn.done).outcome).toBe('suspended');

    // The second runtime, on the log: the question is asked again and answered later; a steer meanwhile.
    let answer!: (a: ApprovalAnswer) => void;
    let reasked = false;
    const later: ApprovalService = {
      request: () => {
        reasked = true;
        return new Promise<ApprovalAnswer>((r) => (answer = r));
      },
    };
    const second = runtimeOn(first.log.events(), later);
    const resumed = second.resumeTurn({ model: scriptedModel([{ text: 'all read and written' }]), inspect: keeper(kept) });
    watchLifecycle(resumed, kept);
    await until(() => reasked);
    void resumed.steer('and keep it short').catch(() => undefined);
    answer('allowed-once');
    expect((await resumed.done).outcome).toBe('completed');
    await tick();

    const byActor = new Map<string, number>();
    for (const k of kept) byActor.set(k.actor.replace(/^call-\d+$/, 'call-*'), (byActor.get(k.actor.replace(/^call-\d+$/, 'call-*')) ?? 0) + 1);
    // Every kind of actor emitted: the turn, its steps, the scheduler and the calls.
    expect([...byActor.keys()].sort()).toEqual(expect.arrayContaining(['call-*', 'scheduler', 'step']));
    expect(kept.length).toBeGreaterThan(40);

    const changed = kept.filter((k) => serialise(k.snapshot) !== k.atEmission);
    const describe = (k: Kept) => {
      const now = serialise(k.snapshot);
      let i = 0;
      while (i < now.length && now[i] === k.atEmission[i]) i++;
      return `${k.actor}: …${k.atEmission.slice(Math.max(0, i - 60), i + 40)}… became …${now.slice(Math.max(0, i - 60), i + 40)}…`;
    };
    expect(changed.map(describe), `${changed.length} of ${kept.length} snapshots changed after they were emitted`).toEqual([]);
  });
});
