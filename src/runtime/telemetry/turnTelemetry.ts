/**
 * Telemetry wired into a runtime (issue 27): spans and metrics projected from the log and the stage
 * stream, and each model request's own start and end (the turn's model wrapped by `observeModel`).
 * Without `telemetry`, nothing is subscribed and turn options pass through unchanged. Browser-safe.
 */
import type { StageStream } from '../inspection/stageStream.js';
import type { Clock } from '../clock.js';
import type { SessionLog } from '../log/sessionLog.js';
import type { TurnOptions } from '../turn/types.js';
import { observeModel } from './observeModel.js';
import type { Telemetry } from './telemetryOptions.js';

export interface TurnTelemetry {
  /** The turn's options with its model (and its follow-ups' models) observed. */
  observed<O extends { model?: TurnOptions['model']; followUpOptions?: TurnOptions['followUpOptions'] }>(o: O): O;
  /** Stops listening; spans still open (a run stopped mid-turn) end, marked unfinished. */
  close(): void;
}

export function wireTelemetry(telemetry: Telemetry | undefined, at: { clock: Clock; log: SessionLog; stages: StageStream }): TurnTelemetry {
  const t = telemetry?.({ clock: at.clock });
  if (!t) return { observed: (o) => o, close: () => undefined };
  // The stage stream costs every call something: it is heard only while spans can record. The log
  // is projected while spans or metrics can record (decided at each turn's start: a turn whole).
  let stopStages: (() => void) | undefined;
  let projecting = true;
  const decide = () => {
    const tracing = t.tracing?.() ?? true;
    projecting = tracing || (t.metering ?? true);
    if (tracing && !stopStages) stopStages = at.stages.on(t.onStage);
    else if (!tracing && stopStages) {
      stopStages();
      stopStages = undefined;
    }
  };
  decide();
  const stopLog = at.log.subscribe((e) => {
    if (e.type === 'turn/start') decide();
    if (projecting) t.onEvent(e);
  });
  const observed: TurnTelemetry['observed'] = (o) => {
    const followUpOptions = o.followUpOptions;
    return {
      ...o,
      ...(o.model ? { model: observeModel(o.model, t.onRequest) } : {}),
      ...(followUpOptions ? { followUpOptions: () => observed(followUpOptions()) } : {}),
    };
  };
  return {
    observed,
    close() {
      stopLog();
      stopStages?.();
      stopStages = undefined;
      t.close();
    },
  };
}
