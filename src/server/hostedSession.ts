/**
 * One session as the wire serves it (SPEC §11): its log (the stream), the live frames a page may
 * show (text deltas, stages, turn states, which approvals this process can answer), and its
 * controls (start, follow up, steer, cancel, resume, answer). `hostRuntime` makes one of a runtime
 * the app created. An approval is answered once: the first answer wins and is remembered before it
 * reaches the runtime, so a second one, from any tab or client, is refused with the winner.
 * Browser-safe (no Node import): it runs wherever the handler runs.
 */
import type { LogEvent, LogEventOf } from '../protocol/index.js';
import type { ApprovalCommand, LiveFrame, SessionSummary, WinningAnswer } from '../protocol/wire.js';
import type { SessionLog } from '../runtime/log/sessionLog.js';
import type { StageListener } from '../runtime/inspection/stageEvents.js';
import type { SteerOutcome, TurnHandle, TurnOptions } from '../runtime/turns.js';
import type { ApprovalInbox, ApprovalReply } from '../view/approvalInbox.js';

/** What a hosted session needs of a runtime (`createRuntime(...)` has it all). */
export interface HostableRuntime {
  readonly log: Pick<SessionLog, 'events' | 'subscribe' | 'get' | 'lastSeq' | 'firstSeq' | 'whenDurable'>;
  /** Hears every call's stage events (see `Runtime.onStage`); optional. */
  onStage?(listener: StageListener): () => void;
  /** Starts a turn (see `Runtime.startTurn`). */
  startTurn(options: TurnOptions): TurnHandle;
  /** Queues a follow-up turn (see `Runtime.followUp`). */
  followUp(message: string, options?: Partial<Omit<TurnOptions, 'input'>>): TurnHandle;
  /** Continues the suspended turn (see `Runtime.resumeTurn`). */
  resumeTurn(options: Omit<TurnOptions, 'input'>): TurnHandle;
  /** The session's suspended turn, if it has one (`createRuntime` has it): resumed on open with `resumeOnOpen`. */
  pendingSuspension?(): unknown;
}

/** How `hostRuntime` serves a runtime: its id, the runtime, its approval inbox, the options of the turns the wire starts. */
export interface HostRuntimeOptions {
  /** The session's id, as URLs name it. */
  readonly id: string;
  readonly runtime: HostableRuntime;
  /**
   * The runtime's approval service (`createRuntime({ approval: inbox })`): the questions it holds
   * are answerable over the wire. Without it, approvals are shown and never answerable here.
   */
  readonly approvals?: ApprovalInbox;
  /** The options of every turn the wire starts or resumes (the model, the system prompt, …). */
  readonly turnOptions: () => Omit<TurnOptions, 'input'>;
  /** Events before the log's `firstSeq` (a log resumed from a checkpoint holds only what follows it). */
  readonly history?: (from: number, to: number) => Promise<readonly LogEvent[]>;
  /** Ends the session's writing when the server lets it go (closes the JSONL file and its lease). */
  readonly close?: () => Promise<void>;
  /**
   * A session whose log ends on a suspended turn resumes it at once, so its questions are asked
   * again and a page can answer them (a server restarted while a question waited). Default false.
   */
  readonly resumeOnOpen?: boolean;
}

/** Why a command was refused, with the code the wire answers. */
export class CommandRefused extends Error {
  constructor(
    readonly code: 'NOT_FOUND' | 'CONFLICT' | 'ALREADY_ANSWERED' | 'NOT_WAITING' | 'BAD_REQUEST',
    message: string,
    readonly winner?: WinningAnswer,
  ) {
    super(message);
    this.name = 'CommandRefused';
  }
}

/** A session as the session handler serves it: its log, its live frames, and the commands a page may send. */
export interface HostedSession {
  readonly id: string;
  readonly log: HostableRuntime['log'];
  /** The events with `seq > after`, in order: the log's, and before its `firstSeq` the history's. */
  eventsAfter(after: number): Promise<readonly LogEvent[]>;
  /** What a page that connects now should know that the log does not say: turn states, answerable calls. */
  liveState(): readonly LiveFrame[];
  /** Every live frame from now on; returns the remover. */
  onLive(listener: (frame: LiveFrame) => void): () => void;
  /** Starts a turn with this input (queued behind the running one). */
  startTurn(input: string): { turnId: string } | Promise<{ turnId: string }>;
  /** Queues a follow-up of the latest turn. */
  followUp(input: string): { turnId: string } | Promise<{ turnId: string }>;
  /** A message for the running turn (see `TurnHandle.steer`). */
  steer(turnId: string, message: string): Promise<SteerOutcome>;
  /** Cancels a turn. */
  cancel(turnId: string, reason?: string): void | Promise<void>;
  /** Continues the session's suspended turn. */
  resume(): { turnId: string } | Promise<{ turnId: string }>;
  /** Answers the approval whose `tool/approval-request` is `approvalSeq`: once, whoever asks first. */
  answer(approvalSeq: number, command: ApprovalCommand): void | Promise<void>;
  /**
   * Lets the session go: a question still waiting is answered "decide later", so its turn suspends
   * with the question in the log (a server that opens the log again asks it again); once the turns
   * this session started have ended or suspended, the log is closed.
   */
  close(): Promise<void>;
}

/** How `GET …/sessions` lists a session and `GET …/sessions/:id` shows it. */
export function summaryOf(s: Pick<HostedSession, 'id' | 'log'>): SessionSummary {
  const start = s.log.events().find((e) => e.type === 'turn/start');
  return { id: s.id, lastSeq: s.log.lastSeq, ...(start?.type === 'turn/start' ? { title: start.input } : {}) };
}

type Key = { turnId: string; stepIndex: number; callId: string };
const sameCall = (a: Key, b: { turnId?: string; stepIndex?: number; callId: string }) => a.turnId === b.turnId && a.stepIndex === b.stepIndex && a.callId === b.callId;

const LOG_ANSWER: Record<LogEventOf<'tool/approval-answer'>['answer'], WinningAnswer['answer']> = {
  'allowed-once': 'allow-once',
  'allowed-always': 'allow-always',
  denied: 'deny',
  timeout: 'timeout',
  cancelled: 'cancelled',
  remembered: 'remembered',
};

/** A logged answer, as a later answer is told it (409 with the winner). */
export const winnerOfLogged = (e: LogEventOf<'tool/approval-answer'>): WinningAnswer => ({ answer: LOG_ANSWER[e.answer], ...(e.reason !== undefined ? { reason: e.reason } : {}), seq: e.seq });

const replyOf = (c: ApprovalCommand): ApprovalReply =>
  c.answer === 'deny' ? { kind: 'deny', ...(c.reason !== undefined ? { reason: c.reason } : {}) } : { kind: c.answer };

/** A session of a runtime the app created, served over the wire. */
export function hostRuntime(options: HostRuntimeOptions): HostedSession {
  const { runtime, approvals } = options;
  const { log } = runtime;
  const listeners = new Set<(f: LiveFrame) => void>();
  const handles = new Map<string, TurnHandle>();
  /** Turn states a page should see on connect (`queued` with its input, then the lifecycle's). */
  const turnStates = new Map<string, Extract<LiveFrame, { type: 'turn' }>>();
  /** The winning answer of each approval answered through this session (by its request's `seq`). */
  const winners = new Map<number, WinningAnswer>();
  const removers: Array<() => void> = [];

  const emit = (f: LiveFrame) => {
    for (const l of [...listeners]) {
      try {
        l(f);
      } catch {
        // One connection failing does not stop the others.
      }
    }
  };

  /** The latest `tool/approval-request` of each call a question is open for. */
  const answerableCalls = (): Key[] => {
    const open = approvals?.questions() ?? [];
    if (open.length === 0) return [];
    const calls: Key[] = [];
    const wanted = new Set(open.map((q) => q.callId));
    const events = log.events();
    for (let i = events.length - 1; i >= 0 && wanted.size > 0; i--) {
      const e = events[i]!;
      if (e.type !== 'tool/approval-request' || !wanted.has(e.callId) || e.turnId === undefined || e.stepIndex === undefined) continue;
      wanted.delete(e.callId);
      calls.unshift({ turnId: e.turnId, stepIndex: e.stepIndex, callId: e.callId });
    }
    return calls;
  };
  const answerableFrame = (): LiveFrame => ({ type: 'answerable', calls: answerableCalls() });

  if (runtime.onStage) {
    removers.push(
      runtime.onStage((e) => {
        if (e.turnId === undefined || e.stepIndex === undefined) return;
        emit({ type: 'stage', turnId: e.turnId, stepIndex: e.stepIndex, callId: e.callId, toolName: e.toolName, index: e.index, event: e.type === 'stage/entered' ? 'entered' : 'exited', stage: e.stage, at: e.at });
      }),
    );
  }
  if (approvals) {
    // The log event of a new question lands before the inbox holds it: the frame follows the inbox.
    removers.push(approvals.subscribe(() => emit(answerableFrame())));
  }

  const setTurnState = (frame: Extract<LiveFrame, { type: 'turn' }>) => {
    const before = turnStates.get(frame.turnId);
    if (before?.state === frame.state) return;
    turnStates.set(frame.turnId, frame);
    emit(frame);
  };

  /** Follows a turn this session started: its deltas and lifecycle go out as live frames. */
  const track = (handle: TurnHandle, queued?: { input: string; followUp?: { kind: 'follow-up' | 'late-steer'; after: string } }): { turnId: string } => {
    const { turnId } = handle;
    handles.set(turnId, handle);
    if (queued) setTurnState({ type: 'turn', turnId, state: 'queued', input: queued.input, ...(queued.followUp ? { followUp: queued.followUp } : {}) });
    const offDelta = handle.onDelta((delta) => emit({ type: 'delta', turnId, delta }));
    const lifecycle = () => {
      const s = handle.lifecycle.getSnapshot();
      const state = s.matches({ live: 'suspending' }) ? 'suspending' : s.matches({ live: 'cancelling' }) ? 'cancelling' : s.matches({ live: 'running' }) ? 'running' : undefined;
      if (state) setTurnState({ type: 'turn', turnId, state });
    };
    const watch = handle.lifecycle.subscribe({ next: lifecycle, error: () => {} });
    lifecycle();
    const ended = () => {
      offDelta();
      watch.unsubscribe();
      turnStates.delete(turnId);
      if (handles.get(turnId) === handle) handles.delete(turnId);
    };
    void handle.done.then(ended, ended);
    return { turnId };
  };

  const attempt = <T>(what: string, f: () => T): T => {
    try {
      return f();
    } catch (e) {
      if (e instanceof CommandRefused) throw e;
      throw new CommandRefused(e instanceof TypeError || e instanceof RangeError ? 'BAD_REQUEST' : 'CONFLICT', `${what}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  const handleOf = (turnId: string) => {
    const h = handles.get(turnId);
    if (!h) throw new CommandRefused('NOT_FOUND', `turn ${turnId} is not running in this session`);
    return h;
  };

  /** How call `key`'s question (asked at `seq`) was answered, if the log says so. */
  const loggedAnswer = (key: Key, seq: number): WinningAnswer | undefined => {
    for (const e of log.events({ from: seq + 1 })) {
      if (e.type === 'tool/approval-answer' && sameCall(key, e)) return winnerOfLogged(e);
    }
    return undefined;
  };

  const session: HostedSession = {
    id: options.id,
    log,
    async eventsAfter(after) {
      const first = log.firstSeq ?? 1;
      const held = log.events({ from: after + 1 });
      if (after + 1 >= first || !options.history) return held;
      return [...(await options.history(after + 1, first - 1)), ...held];
    },
    liveState: () => [...turnStates.values(), answerableFrame()],
    onLive(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    startTurn: (input) => attempt('start', () => track(runtime.startTurn({ ...options.turnOptions(), input }), { input })),
    followUp(input) {
      const after = [...log.events()].reverse().find((e) => e.type === 'turn/start')?.turnId;
      return attempt('follow-up', () => track(runtime.followUp(input, options.turnOptions()), { input, ...(after !== undefined ? { followUp: { kind: 'follow-up' as const, after } } : {}) }));
    },
    async steer(turnId, message) {
      const handle = handleOf(turnId);
      const outcome = await attempt('steer', () => handle.steer(message));
      if (outcome.delivered === 'follow-up' && !handles.has(outcome.turn.turnId)) track(outcome.turn, { input: message, followUp: { kind: 'late-steer', after: turnId } });
      return outcome;
    },
    cancel(turnId, reason) {
      handleOf(turnId).cancel(reason);
    },
    resume: () => attempt('resume', () => track(runtime.resumeTurn(options.turnOptions()))),
    answer(approvalSeq, command) {
      const request = log.get(approvalSeq);
      if (request?.type !== 'tool/approval-request' || request.turnId === undefined || request.stepIndex === undefined) {
        throw new CommandRefused('NOT_FOUND', `no approval ${approvalSeq} in this session`);
      }
      const key: Key = { turnId: request.turnId, stepIndex: request.stepIndex, callId: request.callId };
      const latest = [...log.events({ from: approvalSeq + 1 })].some((e) => e.type === 'tool/approval-request' && sameCall(key, e));
      const open = !latest && answerableCalls().some((k) => sameCall(k, key));
      // "Decide later" answers for now only: once the turn is resumed, the question is open again.
      const winner = loggedAnswer(key, approvalSeq) ?? winners.get(approvalSeq);
      if (winner && !(winner.answer === 'suspend' && open)) throw new CommandRefused('ALREADY_ANSWERED', `approval ${approvalSeq} was already answered (${winner.answer})`, winner);
      if (!open || !approvals) {
        throw new CommandRefused('NOT_WAITING', latest ? `approval ${approvalSeq} was asked again (answer the newer question)` : `nothing waits on approval ${approvalSeq} here (a suspended turn asks again once resumed)`);
      }
      // Remembered before the runtime hears it: a second answer, however close behind, loses.
      winners.set(approvalSeq, { answer: command.answer, ...(command.reason !== undefined ? { reason: command.reason } : {}) });
      if (!approvals.answer(key.callId, replyOf(command))) {
        winners.delete(approvalSeq);
        throw new CommandRefused('NOT_WAITING', `nothing waits on approval ${approvalSeq} here`);
      }
    },
    async close() {
      // Every question still open is kept for later, in the log: its turn suspends.
      for (const q of approvals?.questions() ?? []) approvals?.answer(q.callId, { kind: 'suspend' });
      await Promise.allSettled([...handles.values()].map((h) => h.done));
      for (const remove of removers.splice(0)) remove();
      listeners.clear();
      await options.close?.();
    },
  };
  if (options.resumeOnOpen && runtime.pendingSuspension?.()) session.resume();
  return session;
}
