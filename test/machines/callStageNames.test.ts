/** The stage names every view keys by are the toolCall machine's own stage states, in its order. */
import { describe, expect, it } from 'vitest';
import { CALL_STAGE_NAMES } from '../../machines/callStageNames.js';
import { toolCallMachine } from '../../machines/toolCall.js';

describe('CALL_STAGE_NAMES', () => {
  it("are the toolCall machine's states before `settled`, in order, less the states that wait inside a stage", () => {
    const waitingInside = { preExecuteWaiting: 'preExecute', aborting: 'executing', postExecuteWaiting: 'postExecute' } as const;
    const states = Object.keys(toolCallMachine.config.states!).filter((s) => s !== 'settled');
    expect(states.filter((s) => !(s in waitingInside))).toEqual([...CALL_STAGE_NAMES]);
    for (const [state, stage] of Object.entries(waitingInside)) expect(states.indexOf(state)).toBe(states.indexOf(stage) + 1);
  });
});
