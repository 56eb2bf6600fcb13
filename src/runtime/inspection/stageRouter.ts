/**
 * Who hears a runtime's stage events: listeners for every call, and listeners for the calls of one
 * turn. The runtime's port (`pipeline`) is observed only while someone listens: with no listener
 * each of its functions goes straight to the plain stage, so an unobserved call keeps no stage
 * bookkeeping. Browser-safe.
 */
import type { CallStages } from '../../../machines/callStages.js';
import { describeThrown } from '../../protocol/index.js';
import { observeStages } from './observeStages.js';
import type { CallStageEvent, StageListener } from './stageEvents.js';

export interface StageRouter {
  /** The port to give the machines: observed while anyone listens, else the plain one. */
  readonly pipeline: CallStages;
  /** Hears every call's stages; returns the remover. */
  on(listener: StageListener): () => void;
  /** Hears the stages of the calls of one turn; returns the remover. */
  onTurn(turnId: string, listener: StageListener): () => void;
  /** A port over `pipeline` that also tells `listener` the stages of the calls run on it (a lone call's `onStage`). */
  observe(listener: StageListener): CallStages;
}

export function createStageRouter(inner: CallStages): StageRouter {
  const all = new Set<StageListener>();
  const byTurn = new Map<string, Set<StageListener>>();

  const call = (listener: StageListener, event: CallStageEvent) => {
    try {
      listener(event);
    } catch (e) {
      // A listener's failure never reaches the call; it is recorded, not lost.
      inner.record({
        type: 'warning',
        turnId: event.turnId,
        stepIndex: event.stepIndex,
        callId: event.callId,
        code: 'STAGE_LISTENER_FAILED',
        message: `a stage listener threw on ${event.type} ${event.stage}: ${describeThrown(e)}`,
      });
    }
  };
  const dispatch = (event: CallStageEvent) => {
    for (const l of [...all]) call(l, event);
    const turn = event.turnId === undefined ? undefined : byTurn.get(event.turnId);
    if (turn) for (const l of [...turn]) call(l, event);
  };

  // One port, observed only while anyone listens: unheard, each stage is the plain one.
  const pipeline = observeStages(inner, dispatch, () => all.size > 0 || byTurn.size > 0);

  return {
    pipeline,
    on(listener) {
      all.add(listener);
      return () => {
        all.delete(listener);
      };
    },
    observe: (listener) => observeStages(pipeline, (event) => call(listener, event)),
    onTurn(turnId, listener) {
      let set = byTurn.get(turnId);
      if (!set) byTurn.set(turnId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0 && byTurn.get(turnId) === set) byTurn.delete(turnId);
      };
    },
  };
}
