import type { AnyStateMachine } from 'xstate';
import { toolCallMachine } from './toolCall.js';

/** Every machine of dsh by name: what `npm run viz` draws and the path tests cover. */
export const machineRegistry: Readonly<Record<string, AnyStateMachine>> = {
  toolCall: toolCallMachine,
};
