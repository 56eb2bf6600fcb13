/**
 * Running turns: one turn at a time per session, each wired from injected services. For every turn
 * asked for, two actors: the turn machine (machines/turn.ts: its steps, calls, `turn/start` …
 * `turn/end`; `handle.actor`) and its lifecycle (machines/turnLifecycle.ts: queued, preparing,
 * running, suspending, cancelling, suspended, ended, with its steering child; `handle.lifecycle`).
 * The lifecycle decides; this file only gives it its port (start, cancel, suspend the turn actor,
 * make room, log steers) and tells it what the world did (the turn actor ended, a call parked, the
 * step is quiet). The model's prompt is always projected from the log at request time.
 */
import { createActor, toPromise, type ActorRefFrom } from 'xstate';
import { turnMachine, type TurnOutput } from '../../machines/turn.js';
import { turnLifecycleMachine, type TurnLifecyclePort } from '../../machines/turnLifecycle.js';
import { describeThrown } from '../protocol/index.js';
import { closeOpenWork } from './openWork.js';
import { fitBeforeTurn } from './context/fitContext.js';
import { combineInspect, toXStateInspect } from './inspection/inspectionEvents.js';
import type { StageListener } from './inspection/stageEvents.js';
import { turnAnswer } from './projection/turnAnswer.js';
import { createRequestRetryPolicy } from './requestErrors.js';
import type { TurnSuspension } from './resume/suspendTurn.js';
import { createTurnDeltaHub } from './turnDeltas.js';
import { TurnQueue } from './turn/queue.js';
import { ResumedStepDeps, TurnStepDeps } from './turn/stepDeps.js';
import { checkMessage, createTurnSteering, upcomingStep } from './turn/steering.js';
import type { InternalTurnOptions, TurnHandle, TurnOptions, TurnResult, TurnResume, TurnRunnerDeps } from './turn/types.js';
import type { LogEventOf } from '../protocol/index.js';

export type { CompactFn, SteerOutcome, TurnHandle, TurnOptions, TurnResult, TurnResume, TurnRunnerDeps } from './turn/types.js';
export { toFunctionTool } from './turn/stepDeps.js';

export function createTurnRunner(deps: TurnRunnerDeps) {
  const policy = deps.retryPolicy ?? createRequestRetryPolicy();
  // One turn at a time per session (SPEC §8.16): a turn begins once every turn before it has ended,
  // so its prompt sees their results and the log never interleaves two turns.
  const queue = new TurnQueue();
  /** The latest turn started: what `followUp` continues from (its options, its id). */
  let latest: { turnId: string; options: TurnOptions } | undefined;
  const followUpOptionsOf = (o: TurnOptions): TurnOptions => {
    const { signal: _signal, input: _input, ...rest } = o;
    return { ...rest, ...o.followUpOptions?.(), input: '' };
  };

  /** `soon`: asked for while another actor processes (a late steer's follow-up): it begins in a microtask, outside it. */
  function startTurn(options: InternalTurnOptions, resume?: TurnResume, soon = false): TurnHandle {
    const turnId = resume ? resume.pending.turnId : deps.newTurnId();
    latest = { turnId, options };
    const hub = createTurnDeltaHub(deps.log, turnId);

    // Stage listeners: registered before the turn can start, so its first call's first stage is heard.
    const stageRemovers: Array<() => void> = [];
    let over = false;
    const onStage = (listener: StageListener): (() => void) => {
      if (!deps.stages || over) return () => {};
      const remove = deps.stages.onTurn(turnId, listener);
      stageRemovers.push(remove);
      return remove;
    };
    if (options.onStage) onStage(options.onStage);

    // Steering: messages are the lifecycle's (its steering child); delivered ones are `user/steer`,
    // undelivered ones one late-steer follow-up turn.
    const steering = createTurnSteering({
      log: deps.log,
      turnId,
      followUp: (text) => startTurn({ ...followUpOptionsOf(options), input: text, followUp: { kind: 'late-steer', after: turnId } }, undefined, true),
    });
    const ordinary = new TurnStepDeps(deps, {
      turnId,
      options,
      policy,
      hub,
      beforeRequest: () => lifecycle.getSnapshot().children.steering?.send({ type: 'REQUEST', stepIndex: upcomingStep(deps.log, turnId) }),
    });

    const inspect = toXStateInspect(combineInspect(deps.inspect, options.inspect));
    const actor = createActor(turnMachine, {
      input: {
        deps: resume ? new ResumedStepDeps(ordinary, resume.step) : ordinary,
        turnId,
        input: resume?.pending.turnStart?.input ?? options.input,
        maxSteps: options.maxSteps,
        ...(options.followUp ? { followUp: options.followUp } : {}),
        ...(resume ? { resumeAt: resume.pending.stepIndex } : {}),
        closeCrashedStep: (id, stepIndex, error) => {
          // The turn itself is still running: it writes its own turn/end.
          closeOpenWork(deps.log, `the step running this call crashed (${String(error)})`, { turnId: id, stepIndex }, false);
          cancelCrashedStepCalls(actor);
        },
      },
      clock: deps.clock,
      // Meaningful ids in every inspection event: the root is the turn (not `x:0`).
      id: turnId,
      systemId: 'turn',
      ...(inspect ? { inspect } : {}),
    });

    // What the turn actor ended with (or why it failed); the answer is read from its own events.
    let output: TurnOutput | undefined;
    let failure: { error: unknown } | undefined;
    let suspension: TurnSuspension | undefined;
    let suspended: LogEventOf<'turn/suspended'> | undefined;
    let firstSeq = resume?.pending.turnStart?.seq ?? deps.log.lastSeq + 1;

    const port: TurnLifecyclePort = {
      makesRoom: deps.contextWindow !== undefined,
      // Room for the turn is made before it starts (a summariser may take a model request).
      makeRoom: () =>
        fitBeforeTurn(deps.log, deps.contextWindow!, { turnId, clock: deps.clock, system: options.system, argLimits: deps.argLimits, ...(options.signal ? { signal: options.signal } : {}) }).then(
          () => undefined,
          (e: unknown) => {
            deps.log.append({ type: 'warning', turnId, code: 'COMPACTION_FAILED', message: `making room before the turn failed: ${describeThrown(e)}` });
          },
        ),
      run(cancel, report) {
        if (deps.suspensions) {
          suspension = deps.suspensions.watch({
            actor,
            turnId,
            append: (e) => deps.log.append(e),
            onParked: () => report({ type: 'PARKED' }),
            onUnparked: () => report({ type: 'UNPARKED' }),
            onQuiet: (quiet) => report({ type: 'QUIET', quiet }),
          });
        }
        if (!resume) firstSeq = deps.log.lastSeq + 1;
        toPromise(actor).then(
          (out: TurnOutput | undefined) => {
            output = out;
            suspension?.dispose();
            report({ type: 'TURN.ENDED', outcome: out?.outcome ?? 'cancelled' });
          },
          (error: unknown) => {
            failure = { error };
            suspension?.dispose();
            report({ type: 'TURN.FAILED', error: describeThrown(error) });
          },
        );
        actor.start();
        // Cancelled before it began (an already-aborted signal, SPEC §8.9, or a cancel while queued):
        // `turn/start` and `turn/end` (cancelled), no model request at all.
        actor.send(cancel ? { type: 'CANCEL', reason: cancel.reason } : { type: 'START' });
        return {
          cancel: (reason) => {
            if (actor.getSnapshot().status === 'active') actor.send({ type: 'CANCEL', reason });
          },
          stop: () => {
            suspension?.dispose();
            actor.stop();
          },
        };
      },
      suspend(quiet) {
        suspended = suspension!.suspend(quiet);
      },
      steering: steering.port,
    };
    const lifecycle = createActor(turnLifecycleMachine, { input: { turnId, port }, id: `${turnId}/lifecycle` });
    lifecycle.start();

    const cancel = (reason?: string) => lifecycle.send({ type: 'CANCEL', reason });
    const onAbort = () => cancel('aborted');
    options.signal?.addEventListener('abort', onAbort, { once: true });

    // Settles once the lifecycle is suspended or ended: the handle's `done`.
    const done = new Promise<TurnResult>((resolve, reject) => {
      const sub = lifecycle.subscribe((s) => {
        if (!s.matches('suspended') && !s.matches('ended')) return;
        sub.unsubscribe();
        if (s.matches('suspended')) {
          // The process may exit once the handle settles: the suspension is on disk by then.
          const event = suspended!;
          void Promise.resolve(deps.whenDurable?.(event.seq))
            .catch(() => undefined)
            .then(() => {
              hub.end('suspended');
              resolve({ turnId, outcome: 'suspended', steps: event.stepIndex + 1, ...turnAnswer(deps.log.events({ from: firstSeq }), turnId), suspension: event });
            });
        } else if (s.context.outcome === 'dropped') {
          hub.end('cancelled');
          resolve({ turnId, outcome: 'cancelled', steps: 0, error: s.context.error, text: '' });
        } else if (failure) {
          // The turn actor itself failed (no `turn/end`): delta listeners are told, steers are not lost.
          hub.end('failed');
          reject(failure.error);
        } else {
          // A steer held when the turn ended becomes its follow-up as the steering child closes,
          // which XState starts after this notification: `done` waits that long, so the steer's
          // promise (its follow-up turn) has settled before `done` does.
          const result = { ...output!, ...turnAnswer(deps.log.events({ from: firstSeq }), turnId) };
          queueMicrotask(() => resolve(result));
        }
      });
    });
    const ended = () => {
      over = true;
      deps.onTurnActive?.(-1);
      for (const remove of stageRemovers.splice(0)) remove();
      // A signal that outlives the turn (one per session, say) must not keep the ended turn alive.
      options.signal?.removeEventListener('abort', onAbort);
    };
    void done.then(ended, ended);
    deps.onTurnActive?.(1);

    // Its turn comes once every turn before it has ended (whatever their outcome).
    queue.enter(() => {
      if (!resume && deps.isSuspended?.()) {
        // Queued behind a turn that then suspended: it does not begin (nothing is logged), so the
        // suspended turn stays the session's last and can be resumed.
        lifecycle.send({ type: 'DROP', reason: 'the session has a suspended turn (resume it first); this queued turn did not start' });
        return;
      }
      if (options.signal?.aborted) cancel('aborted');
      lifecycle.send({ type: 'BEGIN' });
    }, soon);
    done.then(queue.leave, queue.leave);

    return {
      turnId,
      actor,
      lifecycle,
      done,
      cancel,
      onStage,
      onDelta: hub.subscribe,
      deltas: hub.iterate,
      steer: (message) => steering.steer(lifecycle, message),
    };
  }

  /**
   * Queues `message` as a new turn after the current one (and any queued before it) ends, with the
   * latest turn's options (model, system, …) unless `options` say otherwise; logged as a
   * `turn/start` with `followUp.kind: 'follow-up'`. Without a turn before it, `options.model` is required.
   */
  function followUp(message: string, options: Partial<Omit<TurnOptions, 'input'>> = {}): TurnHandle {
    const text = checkMessage(message, 'followUp');
    const base = latest ? followUpOptionsOf(latest.options) : undefined;
    const model = options.model ?? base?.model;
    if (!model) throw new TypeError('followUp: no turn has run yet, so options.model is required');
    return startTurn({
      ...base,
      ...options,
      model,
      input: text,
      ...(latest ? { followUp: { kind: 'follow-up' as const, after: latest.turnId } } : {}),
    });
  }

  return Object.assign(startTurn as (options: TurnOptions, resume?: TurnResume) => TurnHandle, { followUp });
}

/**
 * XState leaves a crashed actor's children running: the crashed step's scheduler is cancelled so
 * its calls stop (bodies aborted, pending approvals withdrawn, nothing new dispatched) now that
 * their results can no longer reach the model. What they still log is routed (stepRoutedLog.ts).
 * Sent once the turn's own action has run: an event processed inside another actor's custom action
 * makes XState warn about (and mistrust) the built-in actions it runs.
 */
function cancelCrashedStepCalls(turn: ActorRefFrom<typeof turnMachine>): void {
  const scheduler = turn.getSnapshot().children.step?.getSnapshot().children.scheduler;
  queueMicrotask(() => {
    if (scheduler?.getSnapshot().status === 'active') scheduler.send({ type: 'CANCEL', reason: 'the step running this call crashed' });
  });
}
