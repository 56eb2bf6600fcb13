/**
 * Runs a real machine's transition function outside any actor, the way `xstate/graph` does, but
 * with an actor scope this suite controls:
 *
 * - `self.getSnapshot()` returns the snapshot being transitioned from, as it does inside a running
 *   actor (the graph utilities' mock scope returns an empty actor, so a machine that reads its own
 *   snapshot in an action, as toolCall's `EXECUTED` handler does, would throw there);
 * - custom actions run (with scripted ports), so actions with side effects on context objects
 *   (the scheduler's `addCall`) and calls to the port (`record`, `execute`) happen as in an actor;
 *   built-in effects (`xstate.raise` with a delay, `sendTo`, child start/stop) do not: delays are
 *   explored by sending their `xstate.after.*` event, children are never started (nor are the
 *   call actors the scheduler creates itself: it starts them from an observer, and `self.subscribe`
 *   here observes nothing);
 * - every microstep (`@xstate.microstep`, with the transitions taken) is recorded, in exactly the
 *   shape the runtime's `inspect` option reports, so a planned path and an observed run compare
 *   one to one.
 */
import {
  createEmptyActor,
  type ActorLogic,
  type AnyActorScope,
  type AnyEventObject,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type AnyTransitionDefinition,
  type InspectionEvent,
} from 'xstate';

/** One microstep as the machine took it: the event, the transitions, the resulting snapshot. */
export interface Microstep {
  readonly event: AnyEventObject;
  readonly snapshot: AnyMachineSnapshot;
  readonly transitions: readonly AnyTransitionDefinition[];
}

const empty = createEmptyActor();

/** An actor scope for running `machine.transition` by hand; see the file comment. */
export function modelScope(current: () => AnyMachineSnapshot | undefined, microsteps?: Microstep[]): AnyActorScope {
  const self = Object.create(empty) as { getSnapshot: () => unknown };
  self.getSnapshot = () => current() ?? empty.getSnapshot();
  (self as unknown as { subscribe: () => unknown }).subscribe = () => ({ unsubscribe: () => {} });
  const system = Object.create(empty.system) as { _sendInspectionEvent: (e: InspectionEvent) => void };
  system._sendInspectionEvent = (e) => {
    if (e.type === '@xstate.microstep' && microsteps) {
      microsteps.push({ event: e.event, snapshot: e.snapshot as AnyMachineSnapshot, transitions: e._transitions });
    }
  };
  return {
    self,
    logger: () => {},
    id: '',
    sessionId: 'model',
    defer: () => {},
    system,
    stopChild: () => {},
    emit: () => {},
    actionExecutor: (action: { type: string; exec?: (...args: unknown[]) => void; info: unknown; params: unknown }) => {
      if (!action.type.startsWith('xstate.')) action.exec?.(action.info, action.params);
    },
  } as unknown as AnyActorScope;
}

export interface ModelOptions {
  /**
   * Copies what must not be shared between branches of the graph before a transition, for
   * machines that keep a mutable object in context (none does: the scheduler's commit gate is a value).
   */
  readonly fork?: (snapshot: AnyMachineSnapshot) => AnyMachineSnapshot;
}

/** The machine as actor logic for `xstate/graph`, transitioning through {@link modelScope}. */
export function modelLogic(machine: AnyStateMachine, input: unknown, options: ModelOptions = {}): ActorLogic<AnyMachineSnapshot, AnyEventObject, unknown> {
  const fork = options.fork ?? ((s) => s);
  return {
    config: machine.config,
    transition: (snapshot: AnyMachineSnapshot, event: AnyEventObject) => {
      const from = fork(snapshot);
      return machine.transition(from, event, modelScope(() => from));
    },
    getInitialSnapshot: () => machine.getInitialSnapshot(modelScope(() => undefined), input),
    getPersistedSnapshot: (s: AnyMachineSnapshot) => s,
  } as unknown as ActorLogic<AnyMachineSnapshot, AnyEventObject, unknown>;
}

/** A path replayed from its start: the microsteps of the initial macrostep, then of each event. */
export interface Replay {
  /** The snapshot after the initial macrostep. */
  readonly start: AnyMachineSnapshot;
  readonly initial: readonly Microstep[];
  readonly steps: ReadonlyArray<{ readonly event: AnyEventObject; readonly snapshot: AnyMachineSnapshot; readonly microsteps: readonly Microstep[] }>;
  readonly final: AnyMachineSnapshot;
}

/** Replays `events` on a fresh initial snapshot (fresh input: ports are stateful), recording microsteps. */
export function replay(machine: AnyStateMachine, input: unknown, events: readonly AnyEventObject[], options: ModelOptions = {}): Replay {
  const fork = options.fork ?? ((s: AnyMachineSnapshot) => s);
  const initial: Microstep[] = [];
  let snapshot = machine.getInitialSnapshot(modelScope(() => undefined, initial), input) as AnyMachineSnapshot;
  const start = snapshot;
  const steps: Array<Replay['steps'][number]> = [];
  for (const event of events) {
    const microsteps: Microstep[] = [];
    // Each step's snapshot stays as it was (a mutable context object is copied before it changes).
    const from = fork(snapshot);
    snapshot = machine.transition(from, event, modelScope(() => from, microsteps)) as AnyMachineSnapshot;
    steps.push({ event, snapshot, microsteps });
  }
  return { start, initial, steps, final: snapshot };
}
