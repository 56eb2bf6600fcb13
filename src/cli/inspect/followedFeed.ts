/**
 * A session log another process is still writing (`dsh inspect --follow`): the page gets the
 * events read so far, then each complete line appended after them, checked as replay checks
 * every line (checksum, UTF-8, schema, seq). The file is polled (a stat every `intervalMs`): a
 * watcher misses appends on some file systems, a stat does not. A torn last line (a write in
 * progress) waits for its newline; a line that is damaged stops the following and is reported
 * once, and what was read before it stays on the page.
 */
import { stat } from 'node:fs/promises';
import type { LogEvent } from '../../protocol/index.js';
import { replayJsonlLog, type ReplayResult } from '../../adapters/log/jsonlLog.js';
import { feedListeners, type InspectorFeed } from './feed.js';

export interface FollowedFeed extends InspectorFeed {
  /** Stops polling; the page is told nothing more will change. */
  close(): void;
}

export interface FollowOptions {
  /** How often the file's size is checked (default 250 ms). */
  readonly intervalMs?: number;
  /** Told once, in one line, why following stopped (a damaged line, the file gone). */
  readonly onStop?: (reason: string) => void;
}

/** Follows `path` from where `read` (what `readJsonlLog` returned for it) ended. */
export function followJsonlLog(
  path: string,
  read: { readonly events: readonly LogEvent[]; readonly lastSeq: number; readonly end: ReplayResult['end'] },
  options: FollowOptions = {},
): FollowedFeed {
  const events: LogEvent[] = [...read.events];
  let lastSeq = read.lastSeq;
  let end = read.end;
  let live = true;
  let busy = false;
  const { emit, subscribe } = feedListeners();

  const stop = (reason?: string) => {
    if (!live) return;
    live = false;
    clearInterval(timer);
    if (reason !== undefined) options.onStop?.(reason);
    emit({ type: 'live', live: false });
  };

  const poll = async () => {
    if (busy || !live) return;
    busy = true;
    try {
      const { size } = await stat(path);
      if (size <= end.byte) return;
      // Each good event is shown as it is read: a damaged line further on loses none of them.
      const r = await replayJsonlLog(
        path,
        (e) => {
          events.push(e);
          lastSeq = e.seq;
          emit({ type: 'log', event: e });
        },
        { firstSeq: lastSeq + 1, start: end },
      );
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
    snapshot: () => ({ title: path, live, events: events.slice(), actors: [], pending: [] }),
    subscribe,
    close: () => stop(),
  };
}
