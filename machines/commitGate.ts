/**
 * The bookkeeping of one step's batch of tool calls: which are queued, running, settled and
 * committed. It plans in array order (parallel groups, exclusive calls alone) and releases
 * results strictly in array order, each as soon as every earlier one has settled (SPEC §3).
 *
 * It is a plain object owned by one scheduler actor and changed only by that actor's actions,
 * so a batch of N calls costs O(N) in total rather than an O(N) context copy per event.
 */
import type { AnyActorRef } from 'xstate';
import type { ExecutionMode, ToolCallRequest, ToolResult } from '../src/protocol/index.js';
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

export type EntryStatus = 'queued' | 'running' | 'settled' | 'committed';

export interface BatchEntry {
  readonly index: number;
  readonly request: ToolCallRequest;
  readonly prepared: PrepareOutcome;
  readonly mode: ExecutionMode;
  /** `seq` of this call's `tool/call` event. */
  readonly callSeq: number;
  status: EntryStatus;
  result: ToolResult | undefined;
  /** The call's actor while it runs (created by the scheduler, started in its `startCalls` action). */
  actor?: AnyActorRef | undefined;
}

export class CommitGate {
  readonly entries: BatchEntry[] = [];
  /** First index not yet dispatched (everything before it is running or settled). */
  nextDispatch = 0;
  /** First index not yet committed. */
  nextCommit = 0;
  running = 0;
  exclusiveRunning = false;
  /** Highest number of calls running at once, for inspection and benchmarks. */
  maxRunning = 0;
  private readonly callIds = new Set<string>();

  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new RangeError(`concurrency limit must be >= 1, got ${limit}`);
  }

  /** Adds a call at the end of the batch; returns false when its callId repeats an earlier one. */
  add(request: ToolCallRequest, prepared: PrepareOutcome, callSeq: number): { entry: BatchEntry; duplicate: boolean } {
    const duplicate = this.callIds.has(request.callId);
    this.callIds.add(request.callId);
    const mode = plannedMode(prepared);
    const entry: BatchEntry = { index: this.entries.length, request, prepared, mode, callSeq, status: 'queued', result: undefined };
    this.entries.push(entry);
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
    if (e.mode === 'parallel') return this.running < this.limit ? e : undefined;
    return inputClosed && this.running === 0 ? e : undefined;
  }

  markRunning(e: BatchEntry): void {
    e.status = 'running';
    this.running++;
    if (e.mode === 'exclusive') this.exclusiveRunning = true;
    if (this.running > this.maxRunning) this.maxRunning = this.running;
    this.nextDispatch = e.index + 1;
  }

  /** Records a result (from a finished call actor, or a synthetic one for a call that never ran). */
  settle(index: number, result: ToolResult): void {
    const e = this.entries[index];
    if (!e || e.status === 'settled' || e.status === 'committed') return;
    if (e.status === 'running') {
      this.running--;
      if (e.mode === 'exclusive') this.exclusiveRunning = false;
    }
    e.status = 'settled';
    e.result = result;
    e.actor = undefined;
  }

  /** Call actors created by the last pump and not yet started; taken (and emptied) by the scheduler's `startCalls`. */
  readonly toStart: AnyActorRef[] = [];

  /** Entries that may be committed now, in array order; marks them committed. */
  takeCommittable(): BatchEntry[] {
    const out: BatchEntry[] = [];
    for (let e = this.entries[this.nextCommit]; e && e.status === 'settled'; e = this.entries[this.nextCommit]) {
      e.status = 'committed';
      out.push(e);
      this.nextCommit++;
    }
    return out;
  }

  /** Calls that have not started. */
  queued(): BatchEntry[] {
    return this.entries.filter((e) => e.status === 'queued');
  }

  runningEntries(): BatchEntry[] {
    return this.entries.filter((e) => e.status === 'running');
  }

  get allCommitted(): boolean {
    return this.nextCommit === this.entries.length;
  }

  /** A compact summary for inspectors (the entries themselves hold frozen results). */
  toJSON() {
    return {
      size: this.entries.length,
      nextDispatch: this.nextDispatch,
      nextCommit: this.nextCommit,
      running: this.running,
      statuses: this.entries.map((e) => e.status),
    };
  }
}
