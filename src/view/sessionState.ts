/**
 * The session view's state, built from what the runtime reports: log events (the truth: turns,
 * steps, calls, approvals, progress, results), the stage stream (which pipeline stage each live
 * call is in), a turn handle's text deltas (the text before the log has it) and what the page did
 * (a turn it queued, a steer it sent, a cancel it asked for). Nothing is parsed from text.
 *
 * Every value handed out is frozen, and a change rebuilds only the path from the root to what
 * changed (call → its step → its turn → the root): everything else keeps its reference. A kept
 * snapshot therefore never changes, and selectors can compare by reference. Browser-safe, pure
 * (no subscriptions: sessionView.ts wires it).
 *
 * The cost of a change does not grow with the turn (SPEC §10.9): a call is found by its key, not
 * by a search, and a list (a step's calls, a turn's calls, the steps, the turns) is copied at most
 * once between two snapshots: a list made since the last snapshot was never handed out, so it is
 * changed in place, and frozen when the next snapshot is taken (`#own`). A turn of N calls costs
 * O(N) in all, not O(N²).
 */
import type { LogEvent, LogEventOf } from '../protocol/index.js';
import { deepFreeze, readBoundedJson } from '../runtime/args.js';
import type { CallStageEvent } from '../runtime/inspection/stageEvents.js';
import type { TurnDelta } from '../runtime/turnDeltas.js';
import type { SessionApproval, SessionCallStage, SessionCall, CallProgress, SessionSnapshot, SessionSteer, SessionStep, SessionTurnState, SessionTurn } from './viewTypes.js';

/** Characters of a call's progress output the view keeps (the tail). */
export const PROGRESS_OUTPUT_CHARS = 4_096;

/** The key of a call (and of its approval): `turnId/stepIndex/callId`. */
export const callKey = (turnId: string, stepIndex: number, callId: string): string => `${turnId}/${stepIndex}/${callId}`;

const EMPTY: readonly never[] = Object.freeze([]);

const replaceAt = <T>(list: readonly T[], i: number, value: T): readonly T[] => {
  const next = list.slice();
  next[i] = value;
  return Object.freeze(next);
};
/** Where a value ranked `rank` goes in `list` (sorted by rank): after every one not ranked above it (the end looked at first). */
function slotFor<T>(list: readonly T[], rankOf: (x: T) => number, rank: number): number {
  let at = list.length;
  while (at > 0 && rankOf(list[at - 1]!) > rank) at--;
  return at;
}
/** Where step `stepIndex` is in a turn's steps (sorted by index; the last one is looked at first). */
function stepAt(steps: readonly SessionStep[], stepIndex: number): number {
  for (let i = steps.length - 1; i >= 0; i--) if (steps[i]!.stepIndex === stepIndex) return i;
  return -1;
}
/** How many calls the steps before `si` hold: where step `si`'s calls begin in the turn's flat list. */
function callsBefore(steps: readonly SessionStep[], si: number): number {
  let n = 0;
  for (let i = 0; i < si; i++) n += steps[i]!.calls.length;
  return n;
}
const frozen = <T extends object>(value: T): T => Object.freeze(value);
/** `base` with `changes`, frozen; `undefined` in `changes` removes the key (exactOptionalPropertyTypes-friendly). */
function withChanges<T extends object>(base: T, changes: Partial<{ [K in keyof T]: T[K] | undefined }>): T {
  const next: Record<string, unknown> = Object.assign({}, base as Record<string, unknown>);
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) delete next[k];
    else next[k] = v;
  }
  return Object.freeze(next) as T;
}

/** What a step's text is made of: the log's coalesced text, and the deltas streamed ahead of it. */
interface StepText {
  logText: string;
  logReasoning: string;
  liveText: string;
  liveReasoning: string;
}

/** Which approval questions this process can answer now (the inbox holds them). */
export type AnswerableTest = (approval: { turnId: string; stepIndex: number; callId: string; toolName: string }) => boolean;

/** What the view reads of a stage event (`CallStageEvent` has it; so does a stage frame off the wire). */
export type StageMove = Pick<CallStageEvent, 'type' | 'turnId' | 'stepIndex' | 'callId' | 'stage'>;

export class SessionState {
  #turns: readonly SessionTurn[] = EMPTY;
  #approvals: readonly SessionApproval[] = EMPTY;
  #lastSeq = 0;
  #snapshot: SessionSnapshot | undefined;
  readonly #turnAt = new Map<string, number>();
  /** The text of each live turn's steps (by turn, then step index); dropped when the turn ends. */
  readonly #texts = new Map<string, Map<number, StepText>>();
  /** Stage events of calls whose `tool/call` is not in the log yet (validation runs before it), by turn, then call key. */
  readonly #earlyStages = new Map<string, Map<string, SessionCallStage>>();
  /** Where each call is in its step's calls (by call key). */
  readonly #callAt = new Map<string, number>();
  /** Lists made since the last snapshot: never handed out, so still changed in place; frozen by `snapshot()`. */
  readonly #fresh = new Set<unknown[]>();
  #answerable: AnswerableTest;

  constructor(answerable: AnswerableTest = () => false) {
    this.#answerable = answerable;
  }

  /** The current snapshot: the same object until something changes. */
  snapshot(): SessionSnapshot {
    if (this.#snapshot) return this.#snapshot;
    for (const list of this.#fresh) Object.freeze(list);
    this.#fresh.clear();
    let suspendedTurnId: string | undefined;
    let activeTurnId: string | undefined;
    for (const t of this.#turns) {
      if (t.state === 'suspended') suspendedTurnId = t.turnId;
      else if (t.state === 'running' || t.state === 'suspending' || t.state === 'cancelling') activeTurnId = t.turnId;
    }
    this.#snapshot = frozen({
      turns: this.#turns,
      approvals: this.#approvals,
      ...(suspendedTurnId !== undefined ? { suspendedTurnId } : {}),
      ...(activeTurnId !== undefined ? { activeTurnId } : {}),
      lastSeq: this.#lastSeq,
    });
    return this.#snapshot;
  }

  /** A turn the page asked for that has not started yet (its `turn/start` is not in the log). */
  queueTurn(turnId: string, input: string, followUp?: SessionTurn['followUp']): void {
    if (this.#turnAt.has(turnId)) return;
    this.#addTurn(turnId, input, 'queued', followUp);
  }

  /** The turn's state as the page knows it (a cancel it asked for, a resume it started, a queued turn dropped). */
  setTurnState(turnId: string, state: SessionTurnState, end?: { outcome: NonNullable<SessionTurn['outcome']>; error?: string | undefined }): void {
    this.#updateTurn(turnId, (t) => {
      if (t.state === 'ended' || t.state === state) return t;
      // A cancel cannot un-queue a turn that has not started: it stays queued until it ends.
      if (state === 'cancelling' && t.state === 'queued') return t;
      // The log says the turn is suspended; a lifecycle that is still winding down does not undo it.
      if (t.state === 'suspended' && (state === 'suspending' || state === 'cancelling')) return t;
      return withChanges(t, { state, ...(end ? { outcome: end.outcome, error: end.error } : {}) });
    });
  }

  /** A steer the page sent to a turn; returns its position among the turn's steers. */
  steerSent(turnId: string, text: string): number {
    let at = -1;
    this.#updateTurn(turnId, (t) => {
      at = t.steers.length;
      return withChanges(t, { steers: Object.freeze([...t.steers, frozen<SessionSteer>({ text, status: 'waiting' })]) });
    });
    return at;
  }

  /** A steer the page sent came too late and became turn `followUpTurnId`. */
  steerBecameTurn(turnId: string, at: number, followUpTurnId: string): void {
    this.#updateTurn(turnId, (t) => {
      const s = t.steers[at];
      if (!s || s.status !== 'waiting') return t;
      return withChanges(t, { steers: replaceAt(t.steers, at, frozen<SessionSteer>({ text: s.text, status: 'follow-up', turnId: followUpTurnId })) });
    });
  }

  /** Who can answer approvals changed: every pending approval's `answerable` is read again. */
  setAnswerable(test: AnswerableTest): void {
    this.#answerable = test;
    for (const [i, a] of this.#approvals.entries()) {
      const now = test(a);
      if (now === a.answerable) continue;
      const next = withChanges(a, { answerable: now });
      this.#approvals = replaceAt(this.#approvals, i, next);
      this.#snapshot = undefined;
      this.#updateCall(a, (c) => (c.approval ? withChanges(c, { approval: next }) : c));
    }
  }

  /** A text or reasoning delta of a turn (its handle's `onDelta`). */
  applyDelta(turnId: string, d: TurnDelta): void {
    if (d.type !== 'text-delta' && d.type !== 'reasoning-delta') return;
    if (!this.#turnAt.has(turnId)) return;
    const text = this.#textOf(turnId, d.stepIndex);
    if (d.type === 'text-delta') text.liveText += d.delta;
    else text.liveReasoning += d.delta;
    this.#refreshText(turnId, d.stepIndex);
  }

  /** A stage event of a call (the runtime's stage stream). */
  applyStage(e: StageMove): void {
    const at = placeOf(e);
    if (!at) return;
    let stage: SessionCallStage | undefined;
    if (e.type === 'stage/entered') stage = e.stage;
    else if (e.stage === 'finalizing') stage = 'settled';
    else if (e.stage === 'validating') stage = 'queued';
    if (stage === undefined) return;
    const s = stage;
    const key = callKey(at.turnId, at.stepIndex, at.callId);
    if (this.#callAt.has(key)) this.#updateCall(at, (c) => (c.stage === 'done' || c.stage === s ? c : withChanges(c, { stage: s })));
    else this.#earlyOf(at.turnId).set(key, s);
  }

  /** A log event, in `seq` order. */
  applyEvent(e: LogEvent): void {
    if (e.seq <= this.#lastSeq) return;
    this.#lastSeq = e.seq;
    this.#snapshot = undefined;
    switch (e.type) {
      case 'turn/start':
        if (!this.#turnAt.has(e.turnId)) this.#addTurn(e.turnId, e.input, 'running', e.followUp);
        else {
          // A turn the page queued begins: the log says what it is (its input, what it follows).
          const followUp = e.followUp ? frozen({ ...e.followUp }) : undefined;
          this.#updateTurn(e.turnId, (t) => (t.state === 'queued' ? withChanges(t, { state: 'running', input: e.input, followUp: followUp ?? t.followUp }) : t));
        }
        return;
      case 'step/start':
        this.#resumed(e.turnId);
        this.#updateStep(e.turnId, e.stepIndex, (s) => (s.state === 'running' ? s : withChanges(s, { state: 'running' })));
        return;
      case 'llm/stream': {
        const text = this.#textOf(e.turnId, e.stepIndex);
        if (e.kind === 'text') text.logText += e.text;
        else text.logReasoning += e.text;
        this.#refreshText(e.turnId, e.stepIndex);
        return;
      }
      case 'agent/request-error': {
        // The retry streams anew; the failed attempt's text is no part of the answer.
        Object.assign(this.#textOf(e.turnId, e.stepIndex), { logText: '', logReasoning: '', liveText: '', liveReasoning: '' });
        this.#refreshText(e.turnId, e.stepIndex);
        this.#updateStep(e.turnId, e.stepIndex, (s) => withChanges(s, { requestErrors: Object.freeze([...s.requestErrors, e.message]) }));
        return;
      }
      case 'tool/call': {
        const at = placeOf(e);
        if (at) this.#addCall(e, at);
        return;
      }
      case 'tool/approval-request': {
        const at = placeOf(e);
        if (at) this.#addApproval(e, at);
        return;
      }
      case 'tool/approval-answer': {
        const at = placeOf(e);
        if (!at) return;
        this.#resumed(at.turnId);
        this.#removeApproval(callKey(at.turnId, at.stepIndex, at.callId));
        this.#updateCall(at, (c) => withChanges(c, { approval: undefined, approvalAnswer: e.answer, stage: c.stage === 'awaitingApproval' ? 'queued' : c.stage }));
        return;
      }
      case 'tool/progress': {
        const at = placeOf(e);
        if (at) this.#updateCall(at, (c) => withChanges(c, { progress: nextProgress(c.progress, e), stage: c.stage === 'queued' ? 'executing' : c.stage }));
        return;
      }
      case 'tool/result': {
        const at = placeOf(e);
        if (!at) return;
        this.#resumed(at.turnId);
        this.#removeApproval(callKey(at.turnId, at.stepIndex, at.callId));
        this.#updateCall(at, (c) => withChanges(c, { stage: 'done', result: e.result, approval: undefined }));
        return;
      }
      case 'user/steer':
        this.#updateTurn(e.turnId, (t) => {
          const at = t.steers.findIndex((s) => s.status === 'waiting' && s.text === e.text);
          const steer = frozen<SessionSteer>({ text: e.text, status: 'delivered', stepIndex: e.stepIndex });
          return withChanges(t, { steers: at >= 0 ? replaceAt(t.steers, at, steer) : Object.freeze([...t.steers, steer]) });
        });
        return;
      case 'step/end':
        this.#resumed(e.turnId);
        this.#refreshText(e.turnId, e.stepIndex, true);
        this.#updateStep(e.turnId, e.stepIndex, (s) => withChanges(s, { state: 'ended', finishReason: e.finishReason }));
        return;
      case 'turn/suspended':
        this.#updateStep(e.turnId, e.stepIndex, (s) => withChanges(s, { state: 'suspended' }));
        for (const h of e.held) this.#updateCall({ turnId: e.turnId, stepIndex: e.stepIndex, callId: h.callId }, (c) => (c.stage === 'done' ? c : withChanges(c, { stage: 'settled' })));
        this.#updateTurn(e.turnId, (t) => withChanges(t, { state: 'suspended' }));
        return;
      case 'turn/end':
        this.#endTurn(e);
        return;
    }
  }

  /** `list` to change: itself when it was made since the last snapshot, else a copy (made fresh). */
  #own<T>(list: readonly T[]): T[] {
    this.#snapshot = undefined;
    // Stryker disable next-line ConditionalExpression: copying a list again makes an equal list (the same call objects); only the cost grows, with the square of the turn (SPEC §10.9)
    if (this.#fresh.has(list as T[])) return list as T[];
    const copy = list.slice();
    this.#fresh.add(copy);
    return copy;
  }

  // ---- turns

  #addTurn(turnId: string, input: string, state: SessionTurnState, followUp?: SessionTurn['followUp']): void {
    this.#turnAt.set(turnId, this.#turns.length);
    const turn: SessionTurn = frozen({ turnId, input, ...(followUp ? { followUp: frozen({ ...followUp }) } : {}), state, steps: EMPTY, calls: EMPTY, steers: EMPTY });
    const turns = this.#own(this.#turns);
    turns.push(turn);
    this.#turns = turns;
  }

  /** Replaces turn `turnId` with `fn(turn)` (nothing when it returns the same turn or the turn is unknown). */
  #updateTurn(turnId: string, fn: (t: SessionTurn) => SessionTurn): void {
    const at = this.#turnAt.get(turnId);
    if (at === undefined) return;
    const old = this.#turns[at]!;
    const next = fn(old);
    if (next !== old) {
      const turns = this.#own(this.#turns);
      turns[at] = next;
      this.#turns = turns;
    }
  }

  /** An event of a suspended turn's step arrived: the turn goes on (resumed, here or elsewhere). */
  #resumed(turnId: string): void {
    this.#updateTurn(turnId, (t) => (t.state === 'suspended' ? withChanges(t, { state: 'running' }) : t));
  }

  #endTurn(e: LogEventOf<'turn/end'>): void {
    for (const a of this.#approvals) if (a.turnId === e.turnId) this.#removeApproval(a.id);
    this.#updateTurn(e.turnId, (t) => {
      const last = t.steps[t.steps.length - 1];
      return withChanges(t, { state: 'ended', outcome: e.outcome, error: e.error, answer: last?.text ?? '' });
    });
    this.#texts.delete(e.turnId);
    this.#earlyStages.delete(e.turnId);
  }

  // ---- steps

  /** Replaces step `stepIndex` of the turn with `fn(step)`, creating the step first if need be. */
  #updateStep(turnId: string, stepIndex: number, fn: (s: SessionStep) => SessionStep): void {
    this.#updateTurn(turnId, (t) => this.#withStep(t, stepIndex, fn));
  }

  /** Turn `t` with step `stepIndex` replaced by `fn(step)` (the step made first if need be). */
  #withStep(t: SessionTurn, stepIndex: number, fn: (s: SessionStep) => SessionStep): SessionTurn {
    let at = stepAt(t.steps, stepIndex);
    let steps = t.steps;
    if (at < 0) {
      const fresh: SessionStep = frozen({ stepIndex, state: 'running', text: '', reasoning: '', calls: EMPTY, requestErrors: EMPTY });
      const list = this.#own(t.steps);
      at = slotFor(list, (s) => s.stepIndex, stepIndex);
      list.splice(at, 0, fresh);
      steps = list;
    }
    const old = steps[at]!;
    const next = fn(old);
    if (next !== old) {
      const list = this.#own(steps);
      list[at] = next;
      steps = list;
    }
    return steps === t.steps ? t : withChanges(t, { steps });
  }

  #textOf(turnId: string, stepIndex: number): StepText {
    let steps = this.#texts.get(turnId);
    if (!steps) this.#texts.set(turnId, (steps = new Map()));
    let t = steps.get(stepIndex);
    if (!t) steps.set(stepIndex, (t = { logText: '', logReasoning: '', liveText: '', liveReasoning: '' }));
    return t;
  }

  /** The step's text: what streamed, or the log's once it has as much (or the step ended: the log is the truth). */
  #refreshText(turnId: string, stepIndex: number, ended = false): void {
    const t = this.#texts.get(turnId)?.get(stepIndex);
    if (!t) return;
    const pick = (log: string, live: string) => (ended || log.length >= live.length ? log : live);
    const text = pick(t.logText, t.liveText);
    const reasoning = pick(t.logReasoning, t.liveReasoning);
    this.#updateStep(turnId, stepIndex, (s) => (s.text === text && s.reasoning === reasoning ? s : withChanges(s, { text, reasoning })));
  }

  #earlyOf(turnId: string): Map<string, SessionCallStage> {
    let early = this.#earlyStages.get(turnId);
    if (!early) this.#earlyStages.set(turnId, (early = new Map()));
    return early;
  }

  // ---- calls

  #addCall(e: LogEventOf<'tool/call'>, { turnId, stepIndex }: CallPlace): void {
    const key = callKey(turnId, stepIndex, e.callId);
    if (!this.#turnAt.has(turnId)) this.#addTurn(turnId, '', 'running');
    const early = this.#earlyStages.get(turnId)?.get(key);
    this.#earlyStages.get(turnId)?.delete(key);
    const call: SessionCall = frozen({
      key,
      turnId,
      stepIndex,
      callId: e.callId,
      index: e.index,
      toolName: e.toolName,
      input: deepFreeze(e.input),
      args: argsOf(e.input),
      executionMode: e.executionMode,
      stage: early ?? 'queued',
    });
    if (this.#callAt.has(key)) return;
    this.#updateTurn(turnId, (t) => {
      let pos = 0;
      const next = this.#withStep(t, stepIndex, (s) => {
        // The model's order: by position in the batch (tool/call events come in that order anyway).
        const calls = this.#own(s.calls);
        const at = slotFor(calls, (c) => c.index, e.index);
        calls.splice(at, 0, call);
        for (let i = at; i < calls.length; i++) this.#callAt.set(calls[i]!.key, i);
        pos = at;
        // A new step object even when the list was changed in place: the step holding a list made since
        // the last snapshot was made since then too, and was never handed out.
        return withChanges(s, { calls });
      });
      const flat = this.#flatCalls(next, next.steps, (list) => list.splice(callsBefore(next.steps, stepAt(next.steps, stepIndex)) + pos, 0, call));
      return withChanges(next, { calls: flat });
    });
  }

  /**
   * The turn's flat call list once its steps are `steps`: the same call objects as the steps hold,
   * in step order. While one step has calls (the usual turn), it is that step's own list; else the
   * turn's list with `change` applied (made anew from the steps when it was still a step's).
   */
  #flatCalls(t: SessionTurn, steps: readonly SessionStep[], change: (flat: SessionCall[]) => void): readonly SessionCall[] {
    // Which way the list is made changes only what it costs, never what it holds (every step's
    // calls, in step order: the same call objects), and it is called only once a step has a call.
    let withCalls: SessionStep | undefined;
    // Stryker disable next-line BooleanLiteral: see above
    let several = false;
    for (const s of steps) {
      // Stryker disable next-line ConditionalExpression: see above
      if (s.calls.length === 0) continue;
      // Stryker disable next-line ConditionalExpression,EqualityOperator: see above
      several = withCalls !== undefined;
      // Stryker disable next-line ConditionalExpression: see above
      if (several) break;
      withCalls = s;
    }
    // Stryker disable next-line ConditionalExpression,OptionalChaining: see above
    if (!several) return withCalls?.calls ?? EMPTY;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: a rebuilt list holds the same calls as the turn's list changed in place
    if (t.steps.some((s) => s.calls === t.calls)) {
      const flat = steps.flatMap((s) => s.calls);
      this.#fresh.add(flat);
      return flat;
    }
    const flat = this.#own(t.calls);
    change(flat);
    return flat;
  }

  /**
   * Replaces the call at `at` with `fn(call)` (nothing when the call is unknown). The step and the
   * turn are made anew even when their lists were changed in place: a list made since the last
   * snapshot is held by a step and a turn made since then too, never handed out.
   */
  #updateCall(at: CallPlace, fn: (c: SessionCall) => SessionCall): void {
    const i = this.#callAt.get(callKey(at.turnId, at.stepIndex, at.callId));
    if (i === undefined) return;
    this.#updateTurn(at.turnId, (t) => {
      const si = stepAt(t.steps, at.stepIndex);
      const s = t.steps[si]!;
      const old = s.calls[i]!;
      const next = fn(old);
      if (next === old) return t;
      const calls = this.#own(s.calls);
      calls[i] = next;
      const steps = this.#own(t.steps);
      steps[si] = withChanges(s, { calls });
      const flat = this.#flatCalls(t, steps, (list) => (list[callsBefore(steps, si) + i] = next));
      return withChanges(t, { steps, calls: flat });
    });
  }

  // ---- approvals

  #addApproval(e: LogEventOf<'tool/approval-request'>, at: CallPlace): void {
    const { turnId, stepIndex, callId } = at;
    const key = callKey(turnId, stepIndex, callId);
    // `preview`: what the call would change, when the request carries it (the CLI's approval previews).
    const preview = e.preview;
    this.#updateCall(at, (c) => {
      const a: SessionApproval = frozen({
        id: key,
        turnId,
        stepIndex,
        callId,
        toolName: e.toolName,
        args: c.args,
        ...(e.reason !== undefined ? { reason: e.reason } : {}),
        ...(preview !== undefined ? { preview: deepFreeze(preview) } : {}),
        answerable: this.#answerable({ turnId, stepIndex, callId, toolName: e.toolName }),
        seq: e.seq,
      });
      this.#approvals = Object.freeze([...this.#approvals.filter((x) => x.id !== key), a]);
      return withChanges(c, { approval: a, stage: c.stage === 'done' ? c.stage : 'awaitingApproval' });
    });
  }

  #removeApproval(key: string): void {
    if (!this.#approvals.some((a) => a.id === key)) return;
    this.#approvals = Object.freeze(this.#approvals.filter((a) => a.id !== key));
    this.#snapshot = undefined;
  }
}

/** Where a call is. */
interface CallPlace {
  readonly turnId: string;
  readonly stepIndex: number;
  readonly callId: string;
}

/** Where a call event happened, when it is a turn's (a lone `runCall`'s events name no turn and no step). */
function placeOf(e: { readonly turnId?: string | undefined; readonly stepIndex?: number | undefined; readonly callId: string }): CallPlace | undefined {
  return e.turnId === undefined || e.stepIndex === undefined ? undefined : { turnId: e.turnId, stepIndex: e.stepIndex, callId: e.callId };
}

/** The arguments as a value: raw JSON text is parsed within the argument limits (else it stays text). */
function argsOf(input: unknown): unknown {
  if (typeof input !== 'string') return deepFreeze(input);
  const parsed = readBoundedJson(input);
  return parsed.ok ? deepFreeze(parsed.value) : input;
}

function nextProgress(old: CallProgress | undefined, e: LogEventOf<'tool/progress'>): CallProgress {
  const output = ((old?.output ?? '') + (e.output ?? '')).slice(-PROGRESS_OUTPUT_CHARS);
  return frozen({
    ...(e.message !== undefined ? { message: e.message } : old?.message !== undefined ? { message: old.message } : {}),
    ...(e.progress !== undefined ? { progress: e.progress } : old?.progress !== undefined ? { progress: old.progress } : {}),
    ...(e.total !== undefined ? { total: e.total } : old?.total !== undefined ? { total: old.total } : {}),
    output,
    events: (old?.events ?? 0) + 1,
  });
}
