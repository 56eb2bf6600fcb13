/**
 * The path suite of every machine, by its name in `machineRegistry`. A machine added to the
 * registry without a suite here leaves all its states uncovered, so `coverage.test.ts` fails.
 */
import { planSchedulerPaths } from './scheduler.model.js';
import { runSchedulerPath } from './scheduler.scenario.js';
import { planStepPaths } from './step.model.js';
import { runStepPath } from './step.scenario.js';
import type { PathSuite } from './suite.js';
import { planToolCallPaths } from './toolCall.model.js';
import { runToolCallPath } from './toolCall.scenario.js';
import { planTurnPaths } from './turn.model.js';
import { runTurnPath } from './turn.scenario.js';

export const pathSuites: Readonly<Record<string, PathSuite>> = {
  toolCall: {
    machine: 'toolCall',
    runs: () =>
      planToolCallPaths().paths.flatMap((p) => [
        { name: `${p.name} (in a turn)`, run: () => runToolCallPath(p, 'turn') },
        { name: `${p.name} (rt.runCall)`, run: () => runToolCallPath(p, 'runCall') },
      ]),
  },
  scheduler: { machine: 'scheduler', runs: () => planSchedulerPaths().paths.map((p) => ({ name: p.name, run: () => runSchedulerPath(p) })) },
  step: { machine: 'step', runs: () => planStepPaths().paths.map((p) => ({ name: p.name, run: () => runStepPath(p) })) },
  turn: { machine: 'turn', runs: () => planTurnPaths().paths.map((p) => ({ name: p.name, run: () => runTurnPath(p) })) },
};
