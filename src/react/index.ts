/**
 * `dsh/react`: React hooks over dsh's session view (`createSessionView`, src/view/). Each hook reads
 * the view's store with `useSyncExternalStore` and returns one of its frozen values, so a component
 * re-renders only when the part it reads changed (values that did not change keep their
 * reference). React is a peer (18 or 19); this entry imports nothing else at run time, so it adds
 * only its own few hundred bytes to a page that already imports `dsh`.
 *
 * ```tsx
 * <SessionProvider view={view}><Turns /></SessionProvider>
 * function Turns() { return useTurns().map((t) => <Turn key={t.turnId} turnId={t.turnId} />); }
 * ```
 */
import { createContext, createElement, useCallback, useContext, useMemo, useSyncExternalStore, type ReactNode } from 'react';
import type { SessionApproval, SessionCall, SessionSnapshot, SessionTurn, SessionView, SessionViewBase } from '../view/index.js';

const SessionViewContext = createContext<SessionViewBase | null>(null);

/**
 * Makes `view` the session the hooks below read when they are not given one: a local
 * `createSessionView(...)`, or a session served over the wire (`connectSession(...)`, `dsh/client`).
 */
export function SessionProvider(props: { view: SessionViewBase; children?: ReactNode }): ReactNode {
  return createElement(SessionViewContext.Provider, { value: props.view }, props.children);
}

/**
 * The session view: `view` when given, else the nearest `SessionProvider`'s (throws without either).
 * `V` is the kind of view the app provides (default a local `SessionView`; `RemoteSession` for one
 * from `dsh/client`): the provider holds whatever the app gave it.
 */
export function useSessionView<V extends SessionViewBase = SessionView>(view?: V): V {
  const fromContext = useContext(SessionViewContext);
  const v = view ?? fromContext;
  if (!v) throw new Error('dsh/react: no session view (wrap the tree in <SessionProvider view={…}> or pass the view)');
  return v as V;
}

/**
 * A part of the session snapshot. `select` must return a part of the snapshot (or a primitive),
 * not a new object or array made on each call: that would change on every read.
 */
export function useSessionSelector<T>(select: (snapshot: SessionSnapshot) => T, view?: SessionViewBase): T {
  const v = useSessionView<SessionViewBase>(view);
  const read = useCallback(() => select(v.getSnapshot()), [v, select]);
  return useSyncExternalStore(v.subscribe, read, read);
}

const selectSnapshot = (s: SessionSnapshot) => s;
const selectTurns = (s: SessionSnapshot) => s.turns;
const selectApprovals = (s: SessionSnapshot) => s.approvals;
const NO_CALLS: readonly SessionCall[] = Object.freeze([]);

/** The whole session snapshot: turns, pending approvals, the active and the suspended turn. */
export function useSession(view?: SessionViewBase): SessionSnapshot {
  return useSessionSelector(selectSnapshot, view);
}

/** The session's turns, in the order they were asked for. */
export function useTurns(view?: SessionViewBase): readonly SessionTurn[] {
  return useSessionSelector(selectTurns, view);
}

/** One turn (its state, steps, streamed text, calls, steers), or undefined while the view has none by that id. */
export function useTurn(turnId: string | undefined, view?: SessionViewBase): SessionTurn | undefined {
  const select = useCallback((s: SessionSnapshot) => (turnId === undefined ? undefined : s.turns.find((t) => t.turnId === turnId)), [turnId]);
  return useSessionSelector(select, view);
}

/** The calls of a turn, every step's, each step's in the model's order. */
export function useCalls(turnId: string | undefined, view?: SessionViewBase): readonly SessionCall[] {
  const select = useCallback((s: SessionSnapshot) => (turnId === undefined ? NO_CALLS : (s.turns.find((t) => t.turnId === turnId)?.calls ?? NO_CALLS)), [turnId]);
  return useSessionSelector(select, view);
}

/** What `useApprovals` returns: the pending approvals, and the functions that answer them. */
export interface Approvals {
  /** Every question waiting for an answer, oldest first. */
  readonly approvals: readonly SessionApproval[];
  /** Allows the call once, or always (same tool, same args, for the rest of the session). */
  approve(approvalId: string, scope?: 'once' | 'always'): boolean;
  /** Denies the call, with the person's reason. */
  deny(approvalId: string, reason?: string): boolean;
  /** Decides later: the turn suspends (resume it from its log, in this page or another). */
  suspend(approvalId: string): boolean;
}

/** The pending approvals and the functions that answer them. */
export function useApprovals(view?: SessionViewBase): Approvals {
  const v = useSessionView<SessionViewBase>(view);
  const approvals = useSessionSelector(selectApprovals, v);
  return useMemo(() => ({ approvals, approve: v.approve, deny: v.deny, suspend: v.suspend }), [approvals, v]);
}
