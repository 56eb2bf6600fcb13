/**
 * The framework-neutral session view: a subscribable store (`subscribe` / `getSnapshot`, the shape
 * React's `useSyncExternalStore`, Vue's `shallowRef` + `watch` and Svelte's `readable` take) of the
 * session's turns, steps, streamed text and calls (sessionState.ts), and the page's hands on the
 * session: start, steer, cancel and resume turns, answer approvals. It reads the runtime's log (the
 * truth, a reloaded session's included), its stage stream (the stage each live call is in) and the
 * handles of the turns it starts (their text as it streams, queued turns). Browser-safe.
 */
import type { SessionLog } from '../runtime/log/sessionLog.js';
import type { StageListener } from '../runtime/inspection/stageEvents.js';
import type { SteerOutcome, TurnHandle, TurnOptions } from '../runtime/turns.js';
import type { ApprovalInbox, ApprovalReply } from './approvalInbox.js';
import { SessionState } from './sessionState.js';
import { snapshotListeners } from './snapshotListeners.js';
import type { SessionApproval, SessionSnapshot, SessionTurn } from './viewTypes.js';

/** What the view needs of a runtime (`createRuntime(...)` has it all). */
export interface SessionViewRuntime {
  readonly log: Pick<SessionLog, 'events' | 'subscribe'>;
  /** The stage stream of every call (without it, stages come from the log alone). */
  onStage?(listener: StageListener): () => void;
  /** Starts a turn (see `Runtime.startTurn`). */
  startTurn(options: TurnOptions): TurnHandle;
  /** Queues a follow-up turn (see `Runtime.followUp`). */
  followUp(message: string, options?: Partial<Omit<TurnOptions, 'input'>>): TurnHandle;
  /** Continues the suspended turn (see `Runtime.resumeTurn`). */
  resumeTurn(options: Omit<TurnOptions, 'input'>): TurnHandle;
}

/** How the view answers approvals: the runtime's approval inbox. */
export interface SessionViewOptions {
  /** The runtime's approval service, when it is an inbox: the view answers approvals through it. */
  approvals?: ApprovalInbox;
}

/**
 * What every `dsh/react` hook reads and answers through: a local `SessionView` has it, and so does a
 * session served over the wire (`connectSession`, `dsh/client`).
 */
export type SessionViewBase = Pick<SessionView, 'subscribe' | 'getSnapshot' | 'approve' | 'deny' | 'suspend'>;

/** A UI's view of a session: frozen snapshots of its turns, steps, calls and approvals, and the commands that start, steer and answer. */
export interface SessionView {
  /** Calls `listener` after the snapshot changed (once per burst of changes, in a microtask). */
  subscribe(listener: () => void): () => void;
  /** The current snapshot: frozen, and the same object until something changes. */
  getSnapshot(): SessionSnapshot;
  /** Starts (or queues, behind the running turn) a turn; it shows as `queued` until it begins. */
  startTurn(options: TurnOptions): TurnHandle;
  /** Queues a follow-up turn (`runtime.followUp`). */
  followUp(message: string, options?: Partial<Omit<TurnOptions, 'input'>>): TurnHandle;
  /** Continues the session's suspended turn (`runtime.resumeTurn`); its questions are asked again. */
  resume(options: Omit<TurnOptions, 'input'>): TurnHandle;
  /**
   * Steers turn `turnId` (see `TurnHandle.steer`): it shows as `waiting` until the turn's next
   * model request takes it (`delivered`), or it becomes a follow-up turn. Rejects for a turn this
   * view did not start (no handle) and for an empty message.
   */
  steer(turnId: string, message: string): Promise<SteerOutcome>;
  /** Cancels turn `turnId` (it shows as `cancelling` until it ends); false without its handle. */
  cancel(turnId: string, reason?: string): boolean;
  /** Allows the call of approval `approvalId` once, or always (same tool, same args); false when nobody waits on it. */
  approve(approvalId: string, scope?: 'once' | 'always'): boolean;
  /** Denies the call of approval `approvalId`, with the person's reason; false when nobody waits on it. */
  deny(approvalId: string, reason?: string): boolean;
  /** Decides later: the turn suspends once its step is quiet (`resume` asks again); false when nobody waits on it. */
  suspend(approvalId: string): boolean;
  /** The handle of a turn this view started (until it ended). */
  handle(turnId: string): TurnHandle | undefined;
  /** Stops listening to the runtime. */
  dispose(): void;
}

/**
 * A session that already is a view (a session served over the wire: `connectSession` from
 * `dsh/client` keeps the same projection, fed by the server): returned as it is, so code written
 * against `createSessionView` takes a remote session unchanged.
 */
export function createSessionView<V extends SessionViewBase>(session: V): V;
/**
 * A view of `runtime`'s session, from its log so far and everything that happens from now on.
 *
 * @example
 * ```ts
 * const inbox = createApprovalInbox();
 * const rt = createRuntime({ tools, approval: inbox });
 * const view = createSessionView(rt, { approvals: inbox });
 * view.subscribe(() => render(view.getSnapshot().turns));
 * view.startTurn({ model, input: 'read a.txt' });
 * ```
 */
export function createSessionView(runtime: SessionViewRuntime, options?: SessionViewOptions): SessionView;
export function createSessionView(source: SessionViewRuntime | SessionViewBase, options: SessionViewOptions = {}): SessionView | SessionViewBase {
  return 'getSnapshot' in source ? source : localSessionView(source, options);
}

function localSessionView(runtime: SessionViewRuntime, options: SessionViewOptions): SessionView {
  const inbox = options.approvals;
  const answerable = () => {
    const open = new Set(inbox?.questions().map((q) => q.callId));
    return (a: { callId: string }) => open.has(a.callId);
  };
  const state = new SessionState(answerable());
  const handles = new Map<string, TurnHandle>();
  const removers: Array<() => void> = [];
  const listeners = snapshotListeners(() => state.snapshot());
  const changed = listeners.changed;

  for (const e of runtime.log.events()) state.applyEvent(e);
  listeners.seen();
  removers.push(runtime.log.subscribe((e) => {
    state.applyEvent(e);
    changed();
  }));
  if (runtime.onStage) {
    removers.push(runtime.onStage((e) => {
      state.applyStage(e);
      changed();
    }));
  }
  if (inbox) {
    removers.push(inbox.subscribe(() => {
      state.setAnswerable(answerable());
      changed();
    }));
  }

  /** Follows a turn this view started: queued until its `turn/start`, its text as it streams. */
  const track = (handle: TurnHandle, input: string, followUp?: SessionTurn['followUp']): TurnHandle => {
    const { turnId } = handle;
    handles.set(turnId, handle);
    state.queueTurn(turnId, input, followUp);
    const offDelta = handle.onDelta((d) => {
      state.applyDelta(turnId, d);
      changed();
    });
    // The states a person waits on, from the turn's lifecycle machine (machines/turnLifecycle.ts);
    // how the turn ended comes from the log.
    const lifecycle = () => {
      const s = handle.lifecycle.getSnapshot();
      const now = s.matches({ live: 'suspending' }) ? 'suspending' : s.matches({ live: 'cancelling' }) ? 'cancelling' : s.matches({ live: 'running' }) ? 'running' : undefined;
      if (now !== undefined) {
        state.setTurnState(turnId, now);
        changed();
      }
    };
    const watch = handle.lifecycle.subscribe({ next: lifecycle, error: () => {} });
    lifecycle();
    const off = () => {
      offDelta();
      watch.unsubscribe();
    };
    // A turn that ended without a `turn/start` (dropped while queued) or whose actor failed (a turn
    // the log ended already stays as the log says).
    const ended = (outcome: 'cancelled' | 'failed', error: string | undefined) => {
      state.setTurnState(turnId, 'ended', { outcome, error });
      changed();
    };
    // The handle lets go of the turn, unless it was replaced (the turn resumed under a new handle):
    // then the turn is the new handle's.
    const current = () => {
      off();
      if (handles.get(turnId) !== handle) return false;
      handles.delete(turnId);
      return true;
    };
    void handle.done.then(
      (r) => {
        // The turn is in the snapshot from the moment it was queued (the view never drops one).
        if (current() && r.outcome !== 'suspended' && state.snapshot().turns.find((t) => t.turnId === turnId)!.state === 'queued') ended('cancelled', r.error);
      },
      (e: unknown) => {
        if (current()) ended('failed', String(e));
      },
    );
    changed();
    return handle;
  };

  const approval = (id: string): SessionApproval | undefined => state.snapshot().approvals.find((a) => a.id === id);
  const reply = (id: string, r: ApprovalReply): boolean => {
    const a = approval(id);
    return !!(a && inbox?.answer(a.callId, r));
  };

  return {
    subscribe: listeners.subscribe,
    getSnapshot: () => state.snapshot(),
    startTurn: (turnOptions) => track(runtime.startTurn(turnOptions), turnOptions.input),
    followUp(message, turnOptions) {
      const before = state.snapshot().turns;
      const after = before[before.length - 1]?.turnId;
      return track(runtime.followUp(message, turnOptions), message, after !== undefined ? { kind: 'follow-up', after } : undefined);
    },
    resume(turnOptions) {
      const handle = runtime.resumeTurn(turnOptions);
      track(handle, '');
      state.setTurnState(handle.turnId, 'running');
      changed();
      return handle;
    },
    async steer(turnId, message) {
      const handle = handles.get(turnId);
      if (!handle) throw new Error(`steer: turn ${turnId} is not running in this view`);
      const outcome = handle.steer(message);
      const at = state.steerSent(turnId, message);
      changed();
      const o = await outcome;
      if (o.delivered === 'follow-up') {
        if (!handles.has(o.turn.turnId)) track(o.turn, message, { kind: 'late-steer', after: turnId });
        state.steerBecameTurn(turnId, at, o.turn.turnId);
        changed();
      }
      return o;
    },
    cancel(turnId, reason) {
      const handle = handles.get(turnId);
      if (!handle) return false;
      handle.cancel(reason);
      state.setTurnState(turnId, 'cancelling');
      changed();
      return true;
    },
    approve: (id, scope) => reply(id, { kind: scope === 'always' ? 'allow-always' : 'allow-once' }),
    deny: (id, reason) => reply(id, { kind: 'deny', ...(reason !== undefined ? { reason } : {}) }),
    suspend: (id) => reply(id, { kind: 'suspend' }),
    handle: (turnId) => handles.get(turnId),
    dispose() {
      for (const remove of removers.splice(0)) remove();
      listeners.clear();
    },
  };
}
