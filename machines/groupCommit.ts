/**
 * Group commit: when a session log's buffered events are made durable, as one machine for every
 * sink that persists them (the JSONL file, `src/adapters/log/jsonlSink.ts`; the session store,
 * `src/runtime/store/storeSink.ts`). The sink only buffers an event and tells the machine what it
 * asks for; the machine decides when a group goes out, so a burst of asks costs one write.
 *
 * The states:
 * - `idle`: nothing is asked for;
 * - `scheduled`: a commit is asked for later: `soon` (on the next turn of the event loop, so that
 *   calls dispatched in one burst share one write: what `whenDurable` asks) or `lazy` (within the
 *   sink's lazy delay: an event that is no commit point, so a process killed while a long call runs
 *   still leaves its progress on disk); an ask for sooner moves it sooner;
 * - `committing`: one group is being written (and synced); what is asked meanwhile goes out in the
 *   next group, at once after this one (a commit or `soon`) or scheduled (`lazy`);
 * - `failed` (final): a write failed, or the sink was failed from outside (its lease was taken
 *   over): the port is told once and every later ask is refused by the sink;
 * - `closed` (final): the sink is closed (after its last group).
 *
 * Pure and browser-safe: writing a group, waiting and telling the sink are the injected
 * `GroupCommitPort`'s.
 */
import { assign, fromCallback, fromPromise, setup, type SnapshotFrom } from 'xstate';

/** When a scheduled commit is due. */
export type CommitDue = 'soon' | 'lazy';

/** What group commit does in the world (the sink). */
export interface GroupCommitPort {
  /** Writes everything buffered now as one group and makes it durable; resolves with the last `seq` it holds. */
  commit(): Promise<number>;
  /** A group is durable: the sink settles its waiters (run before the machine takes its next ask). */
  committed(seq: number): void;
  /** Calls `due` after the delay of `when`; returns what cancels it. */
  wait(when: CommitDue, due: () => void): () => void;
  /** The machine failed (a write failed, or `FAIL` from outside): told once, with why. */
  failed(error: unknown): void;
}

export type GroupCommitEvent =
  /** Commit now: a commit point was buffered, the buffer is large, or the sink is flushed. */
  | { type: 'COMMIT' }
  /** Commit on the next turn of the event loop (`whenDurable`). */
  | { type: 'SOON' }
  /** Commit within the lazy delay (an event that is no commit point was buffered). */
  | { type: 'LAZY' }
  /** The sink is closed (it flushed first). */
  | { type: 'CLOSE' }
  /** The sink is failed from outside (its lease was lost). */
  | { type: 'FAIL'; error: unknown };

export interface GroupCommitContext {
  readonly port: GroupCommitPort;
  /** When the scheduled commit is due. */
  readonly due: CommitDue;
  /** Asked for while a group was being written: what happens after it. */
  readonly next: 'nothing' | 'lazy' | 'commit';
  /** Closed while a group was being written: closed after it. */
  readonly closing: boolean;
}

export const groupCommitMachine = setup({
  types: {
    context: {} as GroupCommitContext,
    events: {} as GroupCommitEvent,
    input: {} as { readonly port: GroupCommitPort },
  },
  actors: {
    wait: fromCallback<{ type: 'DUE' }, { readonly port: GroupCommitPort; readonly due: CommitDue }>(({ input, sendBack }) => input.port.wait(input.due, () => sendBack({ type: 'DUE' }))),
    commit: fromPromise<number, { readonly port: GroupCommitPort }>(({ input }) => input.port.commit()),
  },
  actions: {
    tellFailed: ({ context }, params: { error: unknown }) => context.port.failed(params.error),
  },
  guards: {
    dueLazily: ({ context }) => context.due === 'lazy',
    closing: ({ context }) => context.closing,
    commitNext: ({ context }) => context.next === 'commit',
    lazyNext: ({ context }) => context.next === 'lazy',
    /** The fallback after the three above (named for the diagram): nothing was asked for meanwhile. */
    nothingNext: () => true,
  },
}).createMachine({
  id: 'groupCommit',
  // Stryker disable next-line StringLiteral: `due` is set by the ask that schedules, `next` on entering committing; neither initial value is read
  context: ({ input }) => ({ port: input.port, due: 'lazy', next: 'nothing', closing: false }),
  initial: 'idle',
  on: {
    FAIL: { target: '.failed', actions: { type: 'tellFailed', params: ({ event }) => ({ error: event.error }) } },
  },
  states: {
    idle: {
      on: {
        COMMIT: 'committing',
        SOON: { target: 'scheduled', actions: assign({ due: 'soon' }) },
        LAZY: { target: 'scheduled', actions: assign({ due: 'lazy' }) },
        CLOSE: 'closed',
      },
    },
    scheduled: {
      invoke: { id: 'wait', src: 'wait', input: ({ context }) => ({ port: context.port, due: context.due }) },
      on: {
        DUE: 'committing',
        COMMIT: 'committing',
        // Sooner than the lazy delay: the wait starts over, due on the next turn.
        SOON: { guard: 'dueLazily', target: 'scheduled', reenter: true, actions: assign({ due: 'soon' }) },
        CLOSE: 'closed',
      },
    },
    committing: {
      entry: assign({ next: 'nothing' }),
      invoke: {
        id: 'commit',
        src: 'commit',
        input: ({ context }) => ({ port: context.port }),
        onDone: [
          { guard: 'closing', target: 'closed', actions: ({ context, event }) => context.port.committed(event.output) },
          { guard: 'commitNext', target: 'committing', reenter: true, actions: ({ context, event }) => context.port.committed(event.output) },
          { guard: 'lazyNext', target: 'scheduled', actions: [({ context, event }) => context.port.committed(event.output), assign({ due: 'lazy' })] },
          { guard: 'nothingNext', target: 'idle', actions: ({ context, event }) => context.port.committed(event.output) },
        ],
        onError: { target: 'failed', actions: { type: 'tellFailed', params: ({ event }) => ({ error: event.error }) } },
      },
      on: {
        COMMIT: { actions: assign({ next: 'commit' }) },
        SOON: { actions: assign({ next: 'commit' }) },
        LAZY: { actions: assign({ next: ({ context }) => (context.next === 'commit' ? 'commit' : 'lazy') }) },
        CLOSE: { actions: assign({ closing: true }) },
      },
    },
    failed: { type: 'final' },
    closed: { type: 'final' },
  },
});

/** The asks, made once (a sink sends them on every event). */
export const COMMIT = { type: 'COMMIT' } as const;
export const SOON = { type: 'SOON' } as const;
export const LAZY = { type: 'LAZY' } as const;
export const CLOSE = { type: 'CLOSE' } as const;

/**
 * Whether `ask` would change anything in `snapshot`: a sink asks on every event it buffers, and each
 * send is an XState macrostep, so it skips the asks the machine would ignore (a lazy ask while a
 * commit is scheduled, a second commit ask while the next group is already wanted).
 * test/machines/groupCommit.test.ts checks it against the machine in every state.
 */
export function changesAnything(snapshot: SnapshotFrom<typeof groupCommitMachine>, ask: 'COMMIT' | 'SOON' | 'LAZY'): boolean {
  if (snapshot.status !== 'active') return false;
  const { next, due } = snapshot.context;
  // (In idle, next is always 'nothing': every ask changes something, as the last line says.)
  if (snapshot.value === 'scheduled') return ask === 'COMMIT' || (ask === 'SOON' && due === 'lazy');
  return ask === 'LAZY' ? next === 'nothing' : next !== 'commit';
}
