import type { AnyStateMachine } from 'xstate';
import { groupCommitMachine } from './groupCommit.js';
import { schedulerMachine } from './scheduler.js';
import { stepMachine } from './step.js';
import { toolCallMachine } from './toolCall.js';
import { steeringMachine } from './steering.js';
import { turnMachine } from './turn.js';
import { turnLifecycleMachine } from './turnLifecycle.js';

/** Every machine of dsh by name: what `npm run viz` draws and the path tests cover. */
export const machineRegistry: Readonly<Record<string, AnyStateMachine>> = {
  turnLifecycle: turnLifecycleMachine,
  steering: steeringMachine,
  turn: turnMachine,
  step: stepMachine,
  scheduler: schedulerMachine,
  toolCall: toolCallMachine,
  groupCommit: groupCommitMachine,
};
