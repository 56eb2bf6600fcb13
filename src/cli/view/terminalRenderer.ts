/**
 * Draws the run view on a TTY: stable lines are written once; the live lines are erased and
 * redrawn on every change and on a spinner tick (every 100 ms while anything is live).
 */
import { ansiPaint, initialRunView, plainPaint, reduceRunView, renderRunView, type RunViewInput, type RunViewState } from './runView.js';

export interface TerminalRenderer {
  feed(input: RunViewInput): void;
  /** Draws the last frame and stops the ticker. */
  stop(): void;
}

/** `color`: ANSI colours for previews (off with --no-color or NO_COLOR; see colorWanted). */
export function createTerminalRenderer(stream: NodeJS.WriteStream, options: { tickMs?: number; color?: boolean } = {}): TerminalRenderer {
  let state: RunViewState = initialRunView();
  let printedStable = 0;
  let liveCount = 0;
  let frame = 0;
  let scheduled = false;
  const width = () => Math.max(20, (stream.columns || 80) - 1);

  function draw() {
    scheduled = false;
    // A preview leaves room for the rows and the question: what scrolled off cannot be redrawn.
    const maxPreviewLines = Math.max(3, (stream.rows || 40) - 8 - state.calls.length * 2);
    const { stable, live } = renderRunView(state, { now: Date.now(), width: width(), frame, paint: options.color ? ansiPaint : plainPaint, maxPreviewLines });
    let out = liveCount > 0 ? `\x1b[${liveCount}F\x1b[J` : '';
    for (const line of stable.slice(printedStable)) out += `${line}\n`;
    printedStable = stable.length;
    for (const line of live) out += `${line}\n`;
    liveCount = live.length;
    stream.write(out);
  }
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(draw);
  };
  const ticker = setInterval(() => {
    frame++;
    if (state.calls.some((c) => c.endedAt === undefined) || state.approval) schedule();
  }, options.tickMs ?? 100);
  ticker.unref();

  return {
    feed(input) {
      state = reduceRunView(state, input, width());
      schedule();
    },
    stop() {
      clearInterval(ticker);
      draw();
    },
  };
}

/** Colours on a terminal unless `--no-color` or a non-empty NO_COLOR (https://no-color.org) says no. */
export function colorWanted(o: { noColor?: boolean; env: Readonly<Record<string, string | undefined>>; isTTY: boolean }): boolean {
  return o.isTTY && o.noColor !== true && !o.env.NO_COLOR;
}
