/**
 * What the inspector page shows, on the server side: the session's log events, the latest state
 * of each live actor, and the approvals waiting for an answer; listeners get every change as it
 * happens (the page receives them over SSE). A recorded session is a feed that never changes.
 */
import type { InspectionEvent } from 'xstate';
import type { LogEvent } from '../../protocol/index.js';
import type { SessionLog } from '../../runtime/log/sessionLog.js';
import type { CallStageEvent } from '../../runtime/inspection/index.js';
import { actorStateOf, callStateOfStage, type ActorState } from './actorStates.js';
import type { PendingQuestion } from './pageApprovals.js';

export type FeedMessage =
  | { type: 'log'; event: LogEvent }
  | { type: 'actor'; actor: ActorState }
  | { type: 'approvals'; pending: readonly PendingQuestion[] }
  | { type: 'live'; live: boolean };

export interface FeedSnapshot {
  title: string;
  live: boolean;
  events: readonly LogEvent[];
  actors: readonly ActorState[];
  pending: readonly PendingQuestion[];
}

export interface InspectorFeed {
  snapshot(): FeedSnapshot;
  subscribe(listener: (m: FeedMessage) => void): () => void;
}

/** A past session: its events, nothing live. */
export function recordedFeed(title: string, events: readonly LogEvent[]): InspectorFeed {
  return {
    snapshot: () => ({ title, live: false, events, actors: [], pending: [] }),
    subscribe: () => () => undefined,
  };
}

export interface LiveFeed extends InspectorFeed {
  /** Follows a session log: its events so far, then each one appended. Returns the unsubscribe. */
  attachLog(log: SessionLog): () => void;
  /** The turn's inspection callback (`startTurn({ inspect })`). */
  inspect(ev: InspectionEvent): void;
  /** The runtime's stage stream (`runtime.onStage`): every stage a call enters, synchronous ones too. */
  stage(ev: CallStageEvent): void;
  setPending(pending: readonly PendingQuestion[]): void;
  /** The run ended: nothing more will change. */
  end(): void;
}

/** A feed's listeners (one per page connection): `emit` tells each; one that throws does not stop the others. */
export function feedListeners(): { emit(m: FeedMessage): void; subscribe(listener: (m: FeedMessage) => void): () => void } {
  const listeners = new Set<(m: FeedMessage) => void>();
  return {
    emit(m) {
      for (const l of listeners) {
        try {
          l(m);
        } catch {
          // a listener (one page's connection) failing does not stop the others
        }
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

export function liveFeed(title: string, now: () => number = Date.now): LiveFeed {
  const events: LogEvent[] = [];
  const actors = new Map<string, ActorState>();
  let pending: readonly PendingQuestion[] = [];
  let live = true;
  const { emit, subscribe } = feedListeners();
  const record = (a: ActorState | undefined) => {
    if (!a) return;
    const id = `${a.kind}:${a.key}`;
    // Snapshots come on every event an actor takes; only a change of state is news.
    if (actors.get(id)?.state === a.state) return;
    actors.set(id, a);
    emit({ type: 'actor', actor: a });
  };
  return {
    snapshot: () => ({ title, live, events: events.slice(), actors: [...actors.values()], pending }),
    subscribe,
    attachLog(log) {
      for (const e of log.events()) if (e.seq > (events.at(-1)?.seq ?? 0)) events.push(e);
      return log.subscribe((e) => {
        events.push(e);
        emit({ type: 'log', event: e });
      });
    },
    inspect(ev) {
      record(actorStateOf(ev, now()));
    },
    stage(ev) {
      record(callStateOfStage(ev, now()));
    },
    setPending(p) {
      pending = p;
      emit({ type: 'approvals', pending });
    },
    end() {
      live = false;
      emit({ type: 'live', live: false });
    },
  };
}
