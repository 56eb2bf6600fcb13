/**
 * What Ctrl-C does in `dsh run`, as an explicit table (the test walks every row):
 *
 * | where the run is                 | Ctrl-C                                    |
 * |----------------------------------|-------------------------------------------|
 * | at the REPL prompt (`dsh>`)      | leave the REPL (exit 0)                   |
 * | a turn running, first press      | cancel the turn (its calls are aborted)   |
 * | a turn running, pressed again    | exit 130 once closed and written          |
 * | no turn, no prompt (starting up) | exit 130 once closed and written          |
 * | already exiting                  | exit 130 at once                          |
 *
 * "Closed and written": the runtime is closed (MCP servers stopped) and the log flushed, each
 * bounded by EXIT_CLOSE_MS. The count starts again with every turn.
 */

export type InterruptSituation = 'prompt' | 'turn' | 'idle';
export type InterruptAction = 'leave-repl' | 'cancel-turn' | 'exit-after-close' | 'exit-now';

export interface InterruptState {
  /** Presses since the current turn started. */
  readonly presses: number;
  readonly exiting: boolean;
}

export const INITIAL_INTERRUPT_STATE: InterruptState = { presses: 0, exiting: false };

/** The next state and what to do, for one Ctrl-C. Pure. */
export function onInterrupt(state: InterruptState, where: InterruptSituation): { state: InterruptState; action: InterruptAction } {
  if (state.exiting) return { state, action: 'exit-now' };
  if (where === 'prompt') return { state, action: 'leave-repl' };
  if (where === 'turn' && state.presses === 0) return { state: { presses: 1, exiting: false }, action: 'cancel-turn' };
  return { state: { presses: state.presses + 1, exiting: true }, action: 'exit-after-close' };
}

/** A new turn starts: the count starts again. */
export const turnStarted = (state: InterruptState): InterruptState => (state.exiting ? state : INITIAL_INTERRUPT_STATE);
