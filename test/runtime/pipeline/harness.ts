/**
 * Shared set-up for the single-call pipeline tests: a runtime on a ManualClock, a few tools, and
 * checks on the session log that every test gets (schema, seq order, call/result pairing).
 */
import { afterEach, expect } from 'vitest';
import { z } from 'zod';
import { LogEventSchema, type LogEvent, type LogEventOf, type LogEventType, type ToolResult } from '../../../src/protocol/index.js';
import { createRuntime, type RuntimeOptions, type Runtime, type CallHandle } from '../../../src/runtime/createRuntime.js';
import { ManualClock, flushMicrotasks } from '../../../src/runtime/clock.js';
import { defineTool, type ExecContext } from '../../../src/runtime/defineTool.js';

export { flushMicrotasks };

/** What a body was called with, as the body saw it. */
export interface BodyCall {
  readonly args: unknown;
  readonly exec: ExecContext;
}

/** A tool `echo({ text })` returning `text`, recording every call its body received. */
export function echoTool(name = 'echo', extra: { idempotent?: boolean } = {}) {
  const calls: BodyCall[] = [];
  const tool = defineTool({
    name,
    input: z.object({ text: z.string(), nested: z.object({ n: z.number() }).optional() }),
    idempotent: extra.idempotent,
    execute: (args, exec) => {
      calls.push({ args, exec });
      return args.text;
    },
  });
  return { tool, calls };
}

/** A body the test settles by hand; it records the signal it got and whether it saw an abort. */
export function manualTool(name = 'slow', extra: { idempotent?: boolean; honoursSignal?: boolean } = {}) {
  const runs: Array<{
    exec: ExecContext;
    resolve: (v: unknown) => void;
    reject: (e: unknown) => void;
    abortedWith: () => unknown;
  }> = [];
  const tool = defineTool({
    name,
    input: z.object({}).loose(),
    idempotent: extra.idempotent,
    execute: (_args, exec) =>
      new Promise<unknown>((resolve, reject) => {
        let reason: unknown = undefined;
        exec.signal.addEventListener('abort', () => {
          reason = exec.signal.reason ?? 'aborted';
          if (extra.honoursSignal) reject(exec.signal.reason);
        });
        runs.push({ exec, resolve, reject, abortedWith: () => reason });
      }),
  });
  return { tool, runs };
}

/**
 * A body that runs until its call is cancelled, then `resolve`s with a value (a body that ignores
 * the abort and returns anyway) or `reject`s with the signal's reason. `started` settles once it runs.
 */
export function abortableBody(name: string, onAbort: 'resolve' | 'reject') {
  let started!: () => void;
  const startedP = new Promise<void>((r) => (started = r));
  const tool = defineTool({
    name,
    input: z.object({}),
    execute: (_a, exec) =>
      new Promise<string>((resolve, reject) => {
        started();
        exec.signal.addEventListener('abort', () => (onAbort === 'resolve' ? resolve('finished anyway') : reject(exec.signal.reason)), { once: true });
      }),
  });
  return { tool, started: startedP };
}

const live: Runtime[] = [];

/** A runtime on a ManualClock; its log is checked after the test (see `checkLog`). */
export function setup(options: Omit<RuntimeOptions, 'clock'> = {}) {
  const clock = new ManualClock(1_000);
  const rt = createRuntime({ ...options, clock });
  live.push(rt);
  let n = 0;
  /** Sends one call; `input` objects are sent as the JSON text a model would send. */
  const call = (toolName: string, input: unknown = {}, callId = `call-${++n}`): CallHandle =>
    rt.runCall({ callId, toolName, input: typeof input === 'string' ? input : JSON.stringify(input) });
  return { rt, clock, call };
}

/** Every log invariant a single call must keep. */
export function checkLog(rt: Runtime): void {
  const events = rt.log.events();
  events.forEach((e, i) => {
    const parsed = LogEventSchema.safeParse(e);
    expect(parsed.success, `event ${e.seq} (${e.type}) does not parse: ${parsed.error?.message}`).toBe(true);
    expect(e.seq).toBe(i + 1);
  });
  const calls = events.filter((e): e is LogEventOf<'tool/call'> => e.type === 'tool/call');
  const results = events.filter((e): e is LogEventOf<'tool/result'> => e.type === 'tool/result');
  for (const r of results) {
    expect(r.sourceEventSeqs).toHaveLength(1);
    const source = rt.log.get(r.sourceEventSeqs[0]!);
    expect(source?.type).toBe('tool/call');
    expect((source as LogEventOf<'tool/call'>).callId).toBe(r.callId);
    expect(source!.seq).toBeLessThan(r.seq);
    expect(r.result.callId).toBe(r.callId);
  }
  // One result per call, never two.
  const resultIds = results.map((r) => r.callId);
  expect(new Set(resultIds).size).toBe(resultIds.length);
  for (const id of resultIds) expect(calls.some((c) => c.callId === id)).toBe(true);
}

afterEach(() => {
  try {
    for (const rt of live) checkLog(rt);
  } finally {
    live.length = 0;
  }
});

/** The events of one call, in log order. */
export function eventsOf(rt: Runtime, callId: string): LogEvent[] {
  return rt.log.events().filter((e) => 'callId' in e && e.callId === callId);
}

/** Just the event types of one call, in log order. */
export const typesOf = (rt: Runtime, callId: string): LogEventType[] => eventsOf(rt, callId).map((e) => e.type);

/** The one event of `type` for this call (fails the test if there is not exactly one). */
export function only<T extends LogEventType>(rt: Runtime, callId: string, type: T): LogEventOf<T> {
  const found = eventsOf(rt, callId).filter((e) => e.type === type);
  expect(found, `expected exactly one ${type} for ${callId}`).toHaveLength(1);
  return found[0] as LogEventOf<T>;
}

/** The result as the log recorded it; asserts it is the same object the caller got. */
export function loggedResult(rt: Runtime, result: ToolResult): ToolResult {
  const logged = only(rt, result.callId, 'tool/result').result;
  expect(logged).toEqual(result);
  return logged;
}

/** Asserts the user-visible shape of an error result and returns it. */
export function expectError(rt: Runtime, result: ToolResult, code: string, contentIncludes?: string | RegExp): ToolResult {
  expect(result.isError).toBe(true);
  expect(result.error?.code).toBe(code);
  expect(result.value).toBeUndefined();
  if (typeof contentIncludes === 'string') expect(result.content).toContain(contentIncludes);
  else if (contentIncludes) expect(result.content).toMatch(contentIncludes);
  loggedResult(rt, result);
  return result;
}

/** Asserts a successful result with this content and returns it. */
export function expectOk(rt: Runtime, result: ToolResult, content?: string): ToolResult {
  expect(result.error, `unexpected error ${JSON.stringify(result.error)}`).toBeUndefined();
  expect(result.isError).toBe(false);
  if (content !== undefined) expect(result.content).toBe(content);
  loggedResult(rt, result);
  return result;
}

/** True once the promise has settled (checked after flushing microtasks). */
export async function isSettled(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await flushMicrotasks();
  return settled;
}

/** Whether a value and everything inside it is frozen. */
export function isDeepFrozen(value: unknown, seen = new Set<unknown>()): boolean {
  if (value === null || typeof value !== 'object' || seen.has(value)) return true;
  seen.add(value);
  if (!Object.isFrozen(value)) return false;
  return Object.values(value).every((v) => isDeepFrozen(v, seen));
}
