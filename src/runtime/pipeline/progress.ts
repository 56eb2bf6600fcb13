/**
 * A call's progress channel (`exec.progress(update)`): updates are coalesced into `tool/progress`
 * events on the injected clock. The first update is logged at once; later ones wait until
 * `intervalMs` has passed since the previous event, merged (output appended, status fields
 * replaced by the latest), so a call logs at most one event per interval however fast its body
 * reports. `close()` flushes what is pending: the runtime closes the channel when the body settles
 * or its signal aborts, so the last update always lands before the call's `tool/result`, and
 * nothing reported later is logged. Progress goes to the log only: the prompt projection ignores
 * it and the commit gate never waits for it. Browser-safe.
 */
import type { NewLogEvent } from '../../protocol/index.js';
import type { Clock } from '../clock.js';

/** What a tool body reports while it runs. Every field is optional; hostile values are dropped or cut. */
export interface ToolProgress {
  /** Output produced since the previous update (e.g. a command's stdout/stderr as it arrives). */
  readonly output?: string;
  /** A short status line. */
  readonly message?: string;
  /** Work done so far, and the total when known (e.g. MCP progress notifications). */
  readonly progress?: number;
  readonly total?: number;
}

/** Default spacing of one call's `tool/progress` events (ms): at most four a second. */
export const DEFAULT_PROGRESS_INTERVAL_MS = 250;
/** Most characters of output one `tool/progress` event carries (the tail is kept, the rest counted). */
export const MAX_PROGRESS_OUTPUT_CHARS = 4096;
const MAX_MESSAGE_CHARS = 500;

/** How a tool body reports progress (`exec.progress`): logged as bounded, coalesced `tool/progress` events (SPEC §9.1). */
export interface ProgressChannel {
  /** Reports partial output, a message or a fraction; never throws, and is ignored once the call has settled. */
  report(update: ToolProgress): void;
  /** Logs what is pending, then ignores every later update. */
  close(): void;
}

interface Pending {
  output: string;
  dropped: number;
  message?: string;
  progress?: number;
  total?: number;
  updates: number;
}

/** A number a body reported, when it is one (Number.isFinite is false for anything that is not a number). */
const finite = (v: unknown): number | undefined => (Number.isFinite(v) ? (v as number) : undefined);

/** One call's channel: `append` receives each coalesced event (with the call's place in the log). */
export function createProgressChannel(options: {
  clock: Clock;
  intervalMs?: number;
  place: { turnId?: string; stepIndex?: number; callId: string; toolName: string };
  append: (event: NewLogEvent) => void;
}): ProgressChannel {
  const { clock, place, append } = options;
  const interval = Math.max(0, options.intervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS);
  let pending: Pending | undefined;
  let lastAt: number | undefined;
  let timer: unknown;
  let closed = false;

  const flush = () => {
    // Stryker disable next-line ConditionalExpression: the injected clock is handed only its own handles (clearing none changes nothing)
    if (timer !== undefined) clock.clearTimeout(timer);
    timer = undefined;
    const p = pending;
    if (!p) return;
    pending = undefined;
    lastAt = clock.now();
    append({
      type: 'tool/progress',
      ...place,
      // (Output was dropped only to keep the tail of a longer one: p.output is never empty then.)
      ...(p.output !== '' ? { output: p.output } : {}),
      ...(p.dropped > 0 ? { droppedChars: p.dropped } : {}),
      ...(p.message !== undefined ? { message: p.message } : {}),
      ...(p.progress !== undefined ? { progress: p.progress } : {}),
      ...(p.total !== undefined ? { total: p.total } : {}),
      updates: p.updates,
    });
  };

  return {
    report(update) {
      if (closed) return;
      // A body's update is user data: each field is read once, and nothing it does can throw here.
      let output: unknown, message: unknown, progress: unknown, total: unknown;
      try {
        ({ output, message, progress, total } = (update ?? {}) as ToolProgress);
      } catch {
        return;
      }
      const p = (pending ??= { output: '', dropped: 0, updates: 0 });
      p.updates++;
      if (typeof output === 'string') {
        const joined = p.output + output;
        const over = Math.max(0, joined.length - MAX_PROGRESS_OUTPUT_CHARS);
        p.output = joined.slice(over);
        p.dropped += over;
      }
      if (typeof message === 'string') p.message = message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS - 1)}…` : message;
      if (finite(progress) !== undefined) p.progress = progress as number;
      if (finite(total) !== undefined) p.total = total as number;
      if (timer !== undefined) return;
      const wait = lastAt === undefined ? 0 : lastAt + interval - clock.now();
      if (wait <= 0) flush();
      else timer = clock.setTimeout(flush, wait);
    },
    close() {
      // (Closing again flushes nothing: every later update was ignored.)
      flush();
      closed = true;
    },
  };
}
