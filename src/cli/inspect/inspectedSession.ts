/**
 * A session as the inspector serves it over the wire protocol (docs/protocol.md): a hosted session
 * (hostedSession.ts) that takes no commands (the run, or nobody, drives it) and whose questions, in
 * a running session, are answered through the page's approval inbox, first answer wins. Beside the
 * hosted session's live frames it sends what an inspector shows: each turn, step and call actor's
 * state (`actor` frames) and whether the log can still grow (`session`).
 */
import type { LiveFrame } from '../../protocol/wire.js';
import { CommandRefused, hostRuntime, type HostableRuntime, type HostedSession } from '../../server/hostedSession.js';
import type { ApprovalInbox } from '../../view/approvalInbox.js';
import type { ActorState } from './actorStates.js';

export interface InspectedSession {
  /** What the session handler serves. */
  readonly session: HostedSession;
  /** A turn, step or call actor was seen in a state (only a change of state is sent). */
  actor(a: ActorState): void;
  /** Nothing more will be appended: pages are told (`session` frame, live false). */
  end(): void;
}

export interface InspectedSessionOptions {
  /** The session's id, as the API's URLs name it. */
  readonly id: string;
  readonly log: HostableRuntime['log'];
  /** Whether the log can still grow (a running or followed session) or is recorded. */
  readonly live: boolean;
  /** The page's inbox: its questions are answerable over the wire (a running session only). */
  readonly approvals?: ApprovalInbox;
  /** Every stage each call enters and leaves (`runtime.onStage`): sent as `stage` frames. */
  readonly onStage?: HostableRuntime['onStage'];
}

const refuse = (): never => {
  throw new CommandRefused('CONFLICT', 'the inspector shows this session and takes no commands (dsh run or dsh resume drive it); it answers only its questions');
};

export function inspectedSession(o: InspectedSessionOptions): InspectedSession {
  const hosted = hostRuntime({
    id: o.id,
    runtime: { log: o.log, ...(o.onStage ? { onStage: o.onStage } : {}), startTurn: refuse, followUp: refuse, resumeTurn: refuse },
    ...(o.approvals ? { approvals: o.approvals } : {}),
    turnOptions: refuse,
  });
  const listeners = new Set<(f: LiveFrame) => void>();
  const actors = new Map<string, Extract<LiveFrame, { type: 'actor' }>>();
  let live = o.live;
  const emit = (f: LiveFrame) => {
    for (const l of [...listeners]) {
      try {
        l(f);
      } catch {
        // One connection failing does not stop the others.
      }
    }
  };
  const session: HostedSession = {
    ...hosted,
    liveState: () => [...hosted.liveState(), ...actors.values(), { type: 'session', live }],
    onLive(listener) {
      listeners.add(listener);
      const off = hosted.onLive(listener);
      return () => {
        listeners.delete(listener);
        off();
      };
    },
  };
  return {
    session,
    actor(a) {
      const id = `${a.kind}:${a.key}`;
      // Snapshots come on every event an actor takes; only a change of state is news.
      if (actors.get(id)?.state === a.state) return;
      const frame = { type: 'actor', kind: a.kind, key: a.key, state: a.state, at: a.time } as const;
      actors.set(id, frame);
      emit(frame);
    },
    end() {
      if (!live) return;
      live = false;
      emit({ type: 'session', live: false });
    },
  };
}
