/**
 * A session log another process is still writing (`dsh inspect --follow`), mirrored here: the
 * events read so far, then each complete line appended after them, checked as replay checks every
 * line (checksum, UTF-8, schema, seq). The file is polled (a stat every `intervalMs`): a watcher
 * misses appends on some file systems, a stat does not. A torn last line (a write in progress)
 * waits for its newline; a line that is damaged stops the following and is reported once, and what
 * was read before it stays.
 */
import { stat } from 'node:fs/promises';
import type { LogEvent } from '../../protocol/index.js';
import { replayJsonlLog, type ReplayResult } from '../../adapters/log/jsonlLog.js';
import { mirroredLog, type MirroredLog } from '../../server/mirroredLog.js';

export interface FollowedLog {
  /** The events read so far; subscribers hear each one as it is read. */
  readonly log: MirroredLog['log'];
  /** Whether it is still following. */
  readonly live: boolean;
  /** Stops polling (`onStop` hears it, without a reason). */
  close(): void;
}

export interface FollowOptions {
  /** How often the file's size is checked (default 250 ms). */
  readonly intervalMs?: number;
  /** Told once when following stops: why, in one line (a damaged line, the file gone), or undefined for `close()`. */
  readonly onStop?: (reason: string | undefined) => void;
}

/** Follows `path` from where `read` (what `readJsonlLog` returned for it) ended. */
export function followJsonlLog(
  path: string,
  read: { readonly events: readonly LogEvent[]; readonly lastSeq: number; readonly end: ReplayResult['end'] },
  options: FollowOptions = {},
): FollowedLog {
  const mirror = mirroredLog(read.events);
  let end = read.end;
  let live = true;
  let busy = false;

  const stop = (reason?: string) => {
    if (!live) return;
    live = false;
    clearInterval(timer);
    options.onStop?.(reason);
  };

  const poll = async () => {
    if (busy || !live) return;
    busy = true;
    try {
      const { size } = await stat(path);
      if (size <= end.byte) return;
      // Each good event is mirrored as it is read: a damaged line further on loses none of them.
      const r = await replayJsonlLog(path, (e) => void mirror.push(e), { firstSeq: mirror.log.lastSeq + 1, start: end });
      end = r.end;
    } catch (e) {
      stop(`stopped following ${path}: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      busy = false;
    }
  };

  const timer = setInterval(() => void poll(), options.intervalMs ?? 250);
  timer.unref?.();

  return {
    log: mirror.log,
    get live() {
      return live;
    },
    close: () => stop(),
  };
}
