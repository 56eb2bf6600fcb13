// The Ctrl-C ladder of dsh run, row by row (src/cli/run/interruptLadder.ts), and walked as a user
// presses: once cancels the turn, twice exits after closing, three times exits at once.
import { describe, expect, it } from 'vitest';
import { INITIAL_INTERRUPT_STATE, onInterrupt, turnStarted, type InterruptAction, type InterruptSituation, type InterruptState } from '../../src/cli/run/interruptLadder.js';

describe('the Ctrl-C ladder', () => {
  const rows: Array<[string, InterruptState, InterruptSituation, InterruptAction]> = [
    ['at the REPL prompt', INITIAL_INTERRUPT_STATE, 'prompt', 'leave-repl'],
    ['a turn running, first press', INITIAL_INTERRUPT_STATE, 'turn', 'cancel-turn'],
    ['a turn running, pressed again', { presses: 1, exiting: false }, 'turn', 'exit-after-close'],
    ['no turn, no prompt', INITIAL_INTERRUPT_STATE, 'idle', 'exit-after-close'],
    ['already exiting (turn)', { presses: 2, exiting: true }, 'turn', 'exit-now'],
    ['already exiting (prompt)', { presses: 2, exiting: true }, 'prompt', 'exit-now'],
  ];
  for (const [name, state, where, action] of rows) {
    it(name, () => expect(onInterrupt(state, where).action).toBe(action));
  }

  it('once, twice, three times during a turn: cancel, exit after closing, exit at once', () => {
    let s = turnStarted(INITIAL_INTERRUPT_STATE);
    const actions: InterruptAction[] = [];
    for (let i = 0; i < 3; i++) {
      const r = onInterrupt(s, 'turn');
      s = r.state;
      actions.push(r.action);
    }
    expect(actions).toEqual(['cancel-turn', 'exit-after-close', 'exit-now']);
  });

  it('a cancelled turn, then the next turn: its first Ctrl-C cancels again (the count starts over); not after an exit began', () => {
    const cancelled = onInterrupt(INITIAL_INTERRUPT_STATE, 'turn').state;
    expect(onInterrupt(turnStarted(cancelled), 'turn').action).toBe('cancel-turn');
    const exiting = onInterrupt(cancelled, 'turn').state;
    expect(onInterrupt(turnStarted(exiting), 'turn').action).toBe('exit-now');
  });
});
