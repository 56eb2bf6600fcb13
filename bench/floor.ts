/**
 * The hand-written floor W1 and W2 compare dsh against: the same semantics with no XState and no
 * stage machinery. A turn is `turn/start`, then steps of (model response → validated, frozen calls
 * → one pre-execute listener each → bodies in parallel groups bounded by `concurrency`, exclusive
 * calls alone → frozen results committed to an in-memory log strictly in call order, each as soon
 * as every earlier one settled) until the model answers, then `turn/end`.
 *
 * It is deliberately the least code that keeps those guarantees, so the ratio dsh/floor is what
 * the machines, the inspectable stages and the runtime's generality cost per call.
 */
import { freeze } from 'immer';
import type { AnyTool } from '../src/runtime/defineTool.js';
import type { PreExecuteDecision } from '../src/protocol/index.js';

export interface FloorCall {
  readonly callId: string;
  readonly toolName: string;
  /** Raw JSON text, as a model sends it. */
  readonly input: string;
}

export interface FloorResponse {
  readonly text?: string;
  readonly toolCalls?: readonly FloorCall[];
}

/** A model that answers request *n* with `responses[n]` (asynchronously, like a real one). */
export type FloorModel = (request: number) => Promise<FloorResponse>;

export interface FloorView {
  readonly callId: string;
  readonly toolName: string;
  readonly args: unknown;
  readonly index: number;
  readonly executionMode: 'parallel' | 'exclusive';
}

export type FloorPreHook = (call: FloorView, next: () => PreExecuteDecision) => PreExecuteDecision | void;

export interface FloorEvent {
  readonly seq: number;
  readonly type: string;
  readonly [key: string]: unknown;
}

interface FloorResult {
  readonly callId: string;
  readonly toolName: string;
  readonly isError: boolean;
  readonly content: string;
  readonly value?: unknown;
  readonly error?: { code: string; message: string };
}

interface Pending {
  readonly index: number;
  readonly callSeq: number;
  readonly call: FloorCall;
  readonly view: FloorView | undefined;
  readonly tool: AnyTool | undefined;
  readonly error: string | undefined;
  result: FloorResult | undefined;
}

const ALLOW: PreExecuteDecision = Object.freeze({ kind: 'allow' });
const MAX_INLINE_BYTES = 16_384;
const spillPreview = (content: string) => `${content.slice(0, 2048)}\n[… output spilled …]\n${content.slice(-2048)}`;

/** A floor runtime: tools, one ordered list of pre-execute listeners, an in-memory log. */
export function createFloorRuntime(options: { tools: readonly AnyTool[]; concurrency?: number }) {
  const tools = new Map(options.tools.map((t) => [t.name, t]));
  const limit = options.concurrency ?? 8;
  const preHooks: FloorPreHook[] = [];
  const log: FloorEvent[] = [];
  // Events are built whole and frozen; `seq` and `time` are stamped in place (no object spread:
  // V8 takes a slow path for `{ ...e, seq }`, which a hand-written floor would not pay).
  const append = (e: Record<string, unknown>) => {
    e.seq = log.length + 1;
    e.time = Date.now();
    const stamped = Object.freeze(e) as FloorEvent;
    log.push(stamped);
    return stamped;
  };

  function preExecute(view: FloorView): PreExecuteDecision {
    const run = (i: number): PreExecuteDecision => {
      if (i >= preHooks.length) return ALLOW;
      let nextResult: PreExecuteDecision | undefined;
      const next = () => (nextResult ??= run(i + 1));
      return preHooks[i]!(view, next) ?? next();
    };
    return run(0);
  }

  function prepare(call: FloorCall, index: number, turnId: string, stepIndex: number): Pending {
    const callSeq = append({ type: 'tool/call', turnId, stepIndex, callId: call.callId, toolName: call.toolName, input: call.input, index }).seq;
    const tool = tools.get(call.toolName);
    if (!tool) return { index, callSeq, call, view: undefined, tool, error: `unknown tool "${call.toolName}"`, result: undefined };
    let raw: unknown;
    try {
      raw = JSON.parse(call.input);
    } catch (e) {
      return { index, callSeq, call, view: undefined, tool, error: `invalid JSON: ${(e as Error).message}`, result: undefined };
    }
    const parsed = tool.input.safeParse(raw);
    if (!parsed.success) return { index, callSeq, call, view: undefined, tool, error: parsed.error.message, result: undefined };
    const args = freeze(parsed.data, true);
    let safe = false;
    try {
      safe = tool.isConcurrencySafe(args) === true;
    } catch {
      safe = false;
    }
    const view: FloorView = Object.freeze({ callId: call.callId, toolName: tool.name, args, index, executionMode: safe ? 'parallel' : 'exclusive' });
    return { index, callSeq, call, view, tool, error: undefined, result: undefined };
  }

  const fail = (p: Pending, code: string, message: string): FloorResult =>
    freeze({ callId: p.call.callId, toolName: p.call.toolName, isError: true, content: `${code}: ${message}`, error: { code, message } }, true);

  async function runOne(p: Pending): Promise<FloorResult> {
    if (!p.view || !p.tool) return fail(p, 'INVALID_ARGS', p.error ?? 'invalid');
    if (preHooks.length === 0) return body(p);
    let decision: PreExecuteDecision;
    try {
      decision = preExecute(p.view);
    } catch (e) {
      return fail(p, 'HOOK_FAILED', String(e));
    }
    if (decision.kind !== 'allow') return fail(p, 'POLICY_DENIED', decision.kind === 'deny' ? decision.reason : 'ask');
    return body(p);
  }

  async function body(p: Pending): Promise<FloorResult> {
    try {
      const value = await p.tool!.execute(p.view!.args, undefined as never);
      let content = p.tool!.toContent(value);
      // The spill check dsh's default post-execute policy makes (a big output would be cut to a preview).
      if (content.length * 3 > MAX_INLINE_BYTES && new TextEncoder().encode(content).length > MAX_INLINE_BYTES) content = spillPreview(content);
      return freeze({ callId: p.call.callId, toolName: p.view!.toolName, isError: false, content, value }, true);
    } catch (e) {
      return fail(p, 'TOOL_FAILED', String(e));
    }
  }

  /** Runs one batch: parallel groups bounded by `limit`, exclusive calls alone, streamed ordered commit. */
  function runBatch(batch: Pending[], turnId: string, stepIndex: number): Promise<void> {
    return new Promise((resolve) => {
      let nextStart = 0;
      let nextCommit = 0;
      let running = 0;
      let exclusive = false;
      const pump = () => {
        while (nextCommit < batch.length && batch[nextCommit]!.result) {
          const p = batch[nextCommit++]!;
          append({ type: 'tool/result', turnId, stepIndex, callId: p.call.callId, toolName: p.result!.toolName, sourceEventSeqs: [p.callSeq], result: p.result });
        }
        if (nextCommit === batch.length) return resolve();
        while (nextStart < batch.length && !exclusive) {
          const p = batch[nextStart]!;
          const mode = p.view?.executionMode ?? 'parallel';
          if (mode === 'exclusive' ? running > 0 : running >= limit) break;
          nextStart++;
          running++;
          if (mode === 'exclusive') exclusive = true;
          void runOne(p).then((r) => {
            p.result = r;
            running--;
            if (mode === 'exclusive') exclusive = false;
            pump();
          });
        }
      };
      pump();
    });
  }

  let turns = 0;
  return {
    log,
    /** Registers a pre-execute listener (the floor has only this hook). */
    onPreExecute(fn: FloorPreHook) {
      preHooks.push(fn);
    },
    /** Runs one turn to its end; resolves with the number of steps. */
    async runTurn(model: FloorModel, input: string, maxSteps = 16): Promise<number> {
      const turnId = `turn-${++turns}`;
      append({ type: 'turn/start', turnId, input });
      let steps = 0;
      for (let stepIndex = 0; stepIndex < maxSteps; stepIndex++) {
        steps++;
        append({ type: 'step/start', turnId, stepIndex });
        const response = await model(stepIndex);
        if (response.text) append({ type: 'llm/stream', turnId, stepIndex, kind: 'text', text: response.text });
        const calls = response.toolCalls ?? [];
        const batch = calls.map((c, i) => prepare(c, i, turnId, stepIndex));
        if (batch.length) await runBatch(batch, turnId, stepIndex);
        append({ type: 'step/end', turnId, stepIndex, finishReason: calls.length ? 'tool-calls' : 'stop', toolCalls: calls.length });
        if (!calls.length) break;
      }
      append({ type: 'turn/end', turnId, outcome: 'completed', steps });
      return steps;
    },
  };
}
