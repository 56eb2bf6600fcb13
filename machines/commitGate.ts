/**
 * The bookkeeping of one step's batch of tool calls: which are queued, running, settled and
 * committed. It plans in array order (parallel groups, exclusive calls alone) and releases
 * results strictly in array order, each as soon as every earlier one has settled (SPEC §3).
 *
 * A `CommitGate` is a value: the scheduler's context holds one, and a snapshot that was emitted
 * keeps the gate it was emitted with. A change is made with a `GateEdit`, which copies the entry
 * list on its first write and hands back a new gate, so one event costs one copy of the list
 * (however many calls it starts, settles or commits), and an event that changes nothing copies
 * nothing.
 *
 * Below the gate: the two log events that bracket every call (SPEC §1, §3), `logCall` and
 * `logResult`. A call's `tool/call` is appended as it enters the gate (before it can run), its
 * `tool/result` as the gate commits it, naming the `tool/call` it answers; the scheduler's batches
 * and `runtime.runCall`'s lone calls write them alike.
 */
import type { ExecutionMode, NewLogEvent, ToolCallRequest, ToolResult } from '../src/protocol/index.js';
import type { PrepareOutcome } from './callStages.js';

/**
 * How a call is planned (SPEC §8.14). A call that validated has its tool's verdict. A call that did
 * not (unknown tool, bad or cut-off arguments) has no args to ask `isConcurrencySafe` about, so its
 * mode cannot be proven safe and it counts as exclusive: nothing from it onward starts before the
 * model's finish (§8.12), and under `length` it gets TRUNCATED_CALL like every call not yet started.
 */
export function plannedMode(prepared: PrepareOutcome): ExecutionMode {
  return prepared.ok ? prepared.prepared.view.executionMode : 'exclusive';
}

/** Where a call of a step stands in the commit gate: queued, running, settled (its result waits for earlier calls'), committed. */
export type EntryStatus = 'queued' | 'running' | 'settled' | 'committed';

/** One call of the batch, as the gate knows it. Never changed: a new status is a new entry. */
export interface BatchEntry {
  /** Position in the model's order (0-based); also the call actor's id, `call-<index>`, while it runs. */
  readonly index: number;
  readonly request: ToolCallRequest;
  readonly prepared: PrepareOutcome;
  readonly mode: ExecutionMode;
  /** `seq` of this call's `tool/call` event. */
  readonly callSeq: number;
  readonly status: EntryStatus;
  readonly result: ToolResult | undefined;
}

/** The gate of one batch, as a value (see the file comment). */
export interface CommitGate {
  /** Most calls of a parallel group running at once. */
  readonly limit: number;
  readonly entries: readonly BatchEntry[];
  /** First index not yet dispatched (everything before it is running or settled). */
  readonly nextDispatch: number;
  /** First index not yet committed. */
  readonly nextCommit: number;
  readonly running: number;
  readonly exclusiveRunning: boolean;
  /** Highest number of calls running at once, for inspection and benchmarks. */
  readonly maxRunning: number;
}

/** The gate of a batch with no calls yet. */
export function emptyGate(limit: number): CommitGate {
  if (!(limit >= 1)) throw new RangeError(`concurrency limit must be >= 1, got ${limit}`);
  return Object.freeze({ limit, entries: Object.freeze([]), nextDispatch: 0, nextCommit: 0, running: 0, exclusiveRunning: false, maxRunning: 0 });
}

/** True when every call of the gate's batch has been committed. */
export function allCommitted(gate: CommitGate): boolean {
  return gate.nextCommit === gate.entries.length;
}

/**
 * One change to a gate: reads see the change so far, `done()` gives the new gate. The gate it
 * started from is never written to; the entry list is copied on the first write.
 */
export class GateEdit {
  private list: BatchEntry[] | undefined;
  private entries: readonly BatchEntry[];
  private nextDispatch: number;
  private nextCommit: number;
  private exclusiveRunning: boolean;
  private maxRunning: number;
  // Stryker disable next-line BooleanLiteral: a gate rebuilt when nothing changed holds the same values (only the no-copy economy is lost)
  private changed = false;
  running: number;

  constructor(private readonly from: CommitGate) {
    this.entries = from.entries;
    this.nextDispatch = from.nextDispatch;
    this.nextCommit = from.nextCommit;
    this.running = from.running;
    this.exclusiveRunning = from.exclusiveRunning;
    this.maxRunning = from.maxRunning;
  }

  private writable(): BatchEntry[] {
    this.changed = true;
    // Stryker disable next-line ConditionalExpression: copying the list again on every write holds the same entries (only the one-copy-per-event economy is lost)
    if (!this.list) this.entries = this.list = this.entries.slice();
    return this.list;
  }

  private put(e: BatchEntry): void {
    this.writable()[e.index] = e;
  }

  get size(): number {
    return this.entries.length;
  }

  entry(index: number): BatchEntry | undefined {
    return this.entries[index];
  }

  /** Adds a call at the end of the batch; `duplicate` when its callId repeats an earlier one. */
  add(request: ToolCallRequest, prepared: PrepareOutcome, callSeq: number): { entry: BatchEntry; duplicate: boolean } {
    const duplicate = this.entries.some((e) => e.request.callId === request.callId);
    const entry: BatchEntry = { index: this.entries.length, request, prepared, mode: plannedMode(prepared), callSeq, status: 'queued', result: undefined };
    this.writable().push(entry);
    return { entry, duplicate };
  }

  /**
   * The next call that may start now, or undefined. Parallel calls start while fewer than `limit`
   * run and no exclusive call runs; an exclusive call starts only when nothing runs, and only once
   * the batch is complete (`inputClosed`), since a later part of the message might still be cut off.
   */
  nextToStart(inputClosed: boolean): BatchEntry | undefined {
    while (this.nextDispatch < this.entries.length && this.entries[this.nextDispatch]!.status !== 'queued') this.nextDispatch++;
    const e = this.entries[this.nextDispatch];
    if (!e || this.exclusiveRunning) return undefined;
    if (e.mode === 'parallel') return this.running < this.from.limit ? e : undefined;
    return inputClosed && this.running === 0 ? e : undefined;
  }

  markRunning(e: BatchEntry): void {
    this.put({ ...e, status: 'running' });
    this.running++;
    if (e.mode === 'exclusive') this.exclusiveRunning = true;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    this.nextDispatch = e.index + 1;
  }

  /**
   * Records the result of a queued or running call (from its finished actor, or a synthetic one for
   * a call that never ran); each call settles once. A running call that settles was either alone
   * (exclusive) or beside no exclusive one: either way no exclusive call runs after it.
   */
  settle(index: number, result: ToolResult): void {
    const e = this.entries[index]!;
    if (e.status === 'running') {
      this.running--;
      this.exclusiveRunning = false;
    }
    this.put({ ...e, status: 'settled', result });
  }

  /** Entries that may be committed now, in array order; marks them committed. */
  takeCommittable(): BatchEntry[] {
    const out: BatchEntry[] = [];
    for (let e = this.entries[this.nextCommit]; e && e.status === 'settled'; e = this.entries[this.nextCommit]) {
      const committed: BatchEntry = { ...e, status: 'committed' };
      this.put(committed);
      out.push(committed);
      this.nextCommit++;
    }
    return out;
  }

  /** Calls that have not started. */
  queued(): BatchEntry[] {
    return this.entries.filter((e) => e.status === 'queued');
  }

  /** The gate after this edit: the one it started from when nothing changed. */
  done(): CommitGate {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: the same values either way (a gate kept, or rebuilt; a dispatch cursor advanced past settled calls or found again by the next edit)
    if (!this.changed && this.nextDispatch === this.from.nextDispatch) return this.from;
    return Object.freeze({
      limit: this.from.limit,
      entries: this.entries,
      nextDispatch: this.nextDispatch,
      nextCommit: this.nextCommit,
      running: this.running,
      exclusiveRunning: this.exclusiveRunning,
      maxRunning: this.maxRunning,
    });
  }
}

/** The part of the session log the machines need: append, get the stamped seq back. */
export interface LogPort {
  /** Appends the event and returns it stamped with its `seq`. */
  append(event: NewLogEvent): { readonly seq: number };
}

/** Where a call runs: its place in its step's batch, and the step's turn. */
export interface CallPlace {
  readonly index: number;
  readonly turnId: string | undefined;
  readonly stepIndex: number | undefined;
}

/** Appends the call's `tool/call` (with the execution mode it was planned in); returns its `seq`. */
export function logCall(log: LogPort, at: CallPlace, request: ToolCallRequest, prepared: PrepareOutcome): number {
  return log.append({
    type: 'tool/call',
    turnId: at.turnId,
    stepIndex: at.stepIndex,
    callId: request.callId,
    toolName: request.toolName,
    input: request.input,
    index: at.index,
    executionMode: plannedMode(prepared),
  }).seq;
}

/** Appends the `tool/result` answering the `tool/call` at `callSeq`. */
export function logResult(log: LogPort, at: Omit<CallPlace, 'index'>, callSeq: number, result: ToolResult): void {
  log.append({
    type: 'tool/result',
    turnId: at.turnId,
    stepIndex: at.stepIndex,
    callId: result.callId,
    toolName: result.toolName,
    sourceEventSeqs: [callSeq],
    result,
  });
}
