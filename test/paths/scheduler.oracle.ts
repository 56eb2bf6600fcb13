/**
 * What SPEC §3 (with §8.9, §8.10, §8.12, §8.14) says must happen to one step's batch of calls,
 * given what happened along a scheduler path: calls arriving (safe, exclusive, with invalid
 * arguments, repeating a callId), the model's input ending (normally, cut off by `length`, or with
 * an error), the caller's cancel, and a started call finishing or crashing.
 *
 * Written from SPEC, never from `machines/scheduler.ts` or `machines/commitGate.ts`: it plans the
 * batch itself (array order; parallel groups within the concurrency limit; an exclusive call alone,
 * and only after the model's finish; no call overtakes an earlier one), commits results in array
 * order as soon as every earlier one settled, and settles what never started with the code SPEC
 * gives. A call with invalid arguments is planned as exclusive (§8.14: the `safe` tool is
 * concurrency-safe only by its `isConcurrencySafe(args)` verdict, which invalid args cannot get,
 * and a tool cannot declare itself safe for every input), so it and every call after it wait for
 * the model's finish (§8.12), and `length` truncates it. The scheduler path tests compare the
 * runtime's log, bodies started and results with it.
 */
import type { AnyEventObject } from 'xstate';
import { batchCalls, concurrencyFor, requestFor, type CallKind, type SchedulerConfig } from './scheduler.model.js';
import { SPEC_RULES, type OracleRules } from './toolCall.oracle.js';

export type BatchHappening =
  | { readonly kind: 'call-added'; readonly call: CallKind; readonly callId: string }
  | { readonly kind: 'input-ended'; readonly reason: 'finished' | 'length' | 'error' }
  | { readonly kind: 'cancel' }
  | { readonly kind: 'call-finished'; readonly index: number }
  /** The call's machinery broke (not its body): SPEC §3 still wants its result. */
  | { readonly kind: 'call-crashed'; readonly index: number }
  /** An event the oracle cannot read: the path fails, naming it (never a guess). */
  | { readonly kind: 'unknown'; readonly type: string };

/**
 * How SPEC plans a call (§3, §8.14): a call whose arguments validated has its tool's verdict (`safe`
 * says parallel, `exclusive` does not opt in); one whose arguments did not is exclusive. A repeated
 * callId has valid arguments for `safe`: its tool's verdict (it never runs either way).
 */
export function plannedModeOf(kind: CallKind): 'parallel' | 'exclusive' {
  return kind === 'safe' || kind === 'duplicate' ? 'parallel' : 'exclusive';
}

const indexOf = (actorId: string) => Number(/(\d+)$/.exec(actorId)?.[1] ?? NaN);

export function batchHappeningOf(e: AnyEventObject): BatchHappening {
  if (e.type === 'CALL.ADD') return { kind: 'call-added', call: e.kind as CallKind, callId: e.request.callId };
  if (e.type === 'INPUT.END') return { kind: 'input-ended', reason: e.finishReason === 'length' ? 'length' : e.error !== undefined ? 'error' : 'finished' };
  if (e.type === 'CANCEL') return { kind: 'cancel' };
  if (e.type.startsWith('xstate.done.actor.')) return { kind: 'call-finished', index: indexOf(e.actorId) };
  if (e.type.startsWith('xstate.error.actor.')) return { kind: 'call-crashed', index: indexOf(e.actorId) };
  return { kind: 'unknown', type: e.type };
}

export interface BatchVerdict {
  /** `tool/call c0 parallel`, `tool/result c0 ok`, … in log order. */
  readonly log: readonly string[];
  /** callIds whose tool body started, in order. */
  readonly bodiesStarted: readonly string[];
  /** The batch is complete (input ended, every result committed) exactly when the path ends. */
  readonly finished: boolean;
  /** Result codes in call order, when finished. */
  readonly codes: readonly string[] | undefined;
  readonly problems: readonly string[];
}

interface Call {
  readonly index: number;
  readonly callId: string;
  readonly kind: CallKind;
  status: 'queued' | 'running' | 'settled' | 'committed';
  code: string | undefined;
  /** It was running when the caller cancelled. */
  aborted: boolean;
}

export function judgeBatch(config: SchedulerConfig, events: readonly AnyEventObject[], rules: OracleRules = SPEC_RULES): BatchVerdict {
  const limit = concurrencyFor(config.start);
  const calls: Call[] = [];
  const log: string[] = [];
  const bodiesStarted: string[] = [];
  const problems: string[] = [];
  let inputClosed = false;
  let cancelled = false;

  const settle = (c: Call, code: string) => {
    c.status = 'settled';
    c.code = code;
  };
  const running = () => calls.filter((c) => c.status === 'running');
  const add = (kind: CallKind, callId: string) => {
    const c: Call = { index: calls.length, callId, kind, status: 'queued', code: undefined, aborted: false };
    calls.push(c);
    // §1: tool/call is in the log before the call can run; §8.10 in array order, invalid calls too;
    // §8.14: it logs the mode the call is planned with.
    log.push(`tool/call ${callId} ${plannedModeOf(kind)}`);
    // README (error codes): a repeated callId in one step never runs.
    if (kind === 'duplicate') settle(c, 'DUPLICATE_CALL_ID');
  };
  /** §3: plans in array order; nothing overtakes the first call that has not started. */
  const dispatch = () => {
    if (cancelled) return;
    for (;;) {
      const c = calls.find((x) => x.status === 'queued');
      if (!c) return;
      const now = running();
      if (now.some((r) => plannedModeOf(r.kind) === 'exclusive')) return; // an exclusive call runs alone
      if (plannedModeOf(c.kind) === 'exclusive') {
        // §3: after everything before it settled; §8.12: only after the model's finish (§8.14: an
        // invalid call too, and so every call after it waits).
        if (!inputClosed || now.length > 0) return;
      } else if (now.length >= limit) {
        return; // a parallel group is bounded by the concurrency limit
      }
      if (c.kind === 'invalid') {
        // §2: it fails validation: no body. Its turn came like any exclusive call's (§8.14).
        settle(c, 'INVALID_ARGS');
      } else {
        c.status = 'running';
        bodiesStarted.push(c.callId);
      }
    }
  };
  const stabilise = () => {
    for (let changed = true; changed; ) {
      changed = false;
      // §3: on a cancel, started calls settle first; then the rest get ABORTED_BEFORE_DISPATCH, in order.
      if (cancelled && running().length === 0) {
        for (const c of calls) if (c.status === 'queued') settle(c, 'ABORTED_BEFORE_DISPATCH');
      }
      // §3: result i is committed as soon as results 0..i are all settled.
      for (const c of calls) {
        if (c.status === 'committed') continue;
        if (c.status !== 'settled') break;
        c.status = 'committed';
        log.push(`tool/result ${c.callId} ${c.code}`);
      }
      const before = calls.map((c) => c.status).join();
      dispatch();
      changed = calls.map((c) => c.status).join() !== before;
    }
  };
  const finished = () => inputClosed && calls.every((c) => c.status === 'committed');

  if (config.start !== 'streaming') {
    batchCalls[config.start].forEach((kind, i) => add(kind, requestFor(kind, i).callId));
    inputClosed = true;
    // §8.9: a signal already aborted when the batch arrives: every call ABORTED_BEFORE_DISPATCH.
    cancelled = config.start === 'cancelled';
  }
  stabilise();

  /** A call with invalid arguments reports its INVALID_ARGS by itself, once dispatched: nothing new. */
  const isInvalidReport = (h: BatchHappening) => {
    const c = h.kind === 'call-finished' ? calls[h.index] : undefined;
    return c?.kind === 'invalid' && c.status !== 'queued';
  };
  for (const [i, e] of events.entries()) {
    const h = batchHappeningOf(e);
    if (isInvalidReport(h)) continue;
    if (finished()) {
      problems.push(`the batch is complete by SPEC, but the path goes on with ${events.slice(i).map((x) => x.type).join(', ')}`);
      break;
    }
    switch (h.kind) {
      case 'unknown':
        problems.push(`the SPEC oracle does not know what ${h.type} means for a batch: teach it in scheduler.oracle.ts`);
        break;
      case 'call-added':
        if (inputClosed) problems.push(`call ${h.callId} arrives after the input ended`);
        add(h.call, h.callId);
        break;
      case 'input-ended':
        inputClosed = true;
        if (!cancelled && h.reason === 'length') {
          // §8.12/§8.14: cut off by the token limit: every call not yet started (an invalid one
          // included: it waited for the finish) gets TRUNCATED_CALL.
          for (const c of calls) if (c.status === 'queued') settle(c, 'TRUNCATED_CALL');
        } else if (!cancelled && h.reason === 'error') {
          // SPEC is silent; the step fails (§5), so nothing more may start: as for a cancel.
          for (const c of calls) if (c.status === 'queued') settle(c, 'ABORTED_BEFORE_DISPATCH');
        }
        break;
      case 'cancel':
        cancelled = true;
        for (const c of running()) c.aborted = true;
        break;
      case 'call-finished':
      case 'call-crashed': {
        const c = calls[h.index];
        if (!c || c.status !== 'running') {
          problems.push(`the path ends call ${h.index}, which by SPEC §3 is not running (${c ? c.status : 'no such call'})`);
          break;
        }
        if (h.kind === 'call-crashed') settle(c, 'TOOL_FAILED'); // §3: no half pairs; §5: a structured error
        else if (c.aborted && rules.bodyValueAfterCancel === 'aborted') settle(c, 'ABORTED'); // see OracleRules
        else settle(c, 'ok');
        break;
      }
    }
    stabilise();
  }
  const done = finished();
  if (!done) problems.push('the path ends before the batch is complete by SPEC');
  return { log, bodiesStarted, finished: done, codes: done ? calls.map((c) => c.code!) : undefined, problems };
}
