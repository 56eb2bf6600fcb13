/**
 * The session log on disk, for Node: an append-only JSONL file (one event per line). This file
 * opens a session's log (`openJsonlSessionLog`); the work is split by job:
 * - jsonlSink.ts: writing, with group commit and `whenDurable`;
 * - jsonlReplay.ts: reading back, every line checked (checksum, UTF-8, JSON, schema, `seq`);
 * - jsonlValidation.ts: a replayed value against `LogEventSchema`;
 * - jsonlCheckpoint.ts: checkpoints, so a resumed session reads from its last one.
 * Everything they export is exported from here too (the module's public API).
 */
import { realpathSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { LogEvent } from '../../protocol/index.js';
import type { Clock } from '../../runtime/clock.js';
import { SessionIndex } from '../../runtime/log/sessionIndex.js';
import { createMemoryLog, type SessionLog } from '../../runtime/log/sessionLog.js';
import { DEFAULT_CHECKPOINT_EVERY, findLastCheckpoint, writeCheckpoints } from './jsonlCheckpoint.js';
import { JsonlLogError, readJsonlLog, replayJsonlLog, type TornTail } from './jsonlReplay.js';
import { createJsonlLogSink, type JsonlLogSink, type JsonlLogSinkOptions } from './jsonlSink.js';
import { holdSessionLease, type HeldSessionLease, type HoldSessionLeaseOptions } from '../store/sessionLease.js';

export * from './jsonlSink.js';
export * from './jsonlReplay.js';
export { validateLogEvent } from './jsonlValidation.js';
export { DEFAULT_CHECKPOINT_EVERY, findLastCheckpoint, type FoundCheckpoint } from './jsonlCheckpoint.js';

/** How `openJsonlSessionLog` opens a session file: checkpoints, the writer lease, group commit. */
export interface OpenJsonlSessionLogOptions extends Omit<JsonlLogSinkOptions, 'path'> {
  clock?: Clock;
  /**
   * Append a `session/checkpoint` after this many events (default 5,000; 0: never), once the file
   * has also grown by the last checkpoint's size since it (see jsonlCheckpoint.ts).
   */
  checkpointEvery?: number;
  /** Start from the file's last checkpoint, if it checks out (default true); false: replay it all. */
  fromCheckpoint?: boolean;
  /**
   * The session's writer lease (src/adapters/store/sessionLease.ts). Default: taken here, before
   * the file is read, and released when `sink.close()` has closed it; another writer of the same
   * file (by any name: a symlink, a hard link) makes the open fail at once with a
   * `StoreConflictError` `LEASE_HELD`, nothing read or written; a lease lost later (this process
   * was stopped past it and another took over) aborts the sink, so nothing more is written.
   * Options: how to take it. A lease already held on this file (`holdSessionLease`): used as it
   * is (its holder releases it). `false`: no lease (a log no other process can reach).
   */
  lease?: HoldSessionLeaseOptions | HeldSessionLease | false;
}

/** A session log opened on a JSONL file: the log to give `createRuntime`, its sink, and `close()`, which releases the lease. */
export interface OpenedJsonlSessionLog {
  log: SessionLog;
  sink: JsonlLogSink;
  torn?: TornTail;
  /** `seq` of the checkpoint the session was resumed from (absent: the whole file was replayed). */
  resumedFrom?: number;
  /** The writer lease the log is written under (absent with `lease: false`). */
  lease?: HeldSessionLease;
  /**
   * Ends the session's writing: flushes what is buffered, closes the file, and releases the lease
   * this call took (a lease passed in `options.lease` stays its holder's). Same as `sink.close()`;
   * also `await using opened = await openJsonlSessionLog(path)` (`Symbol.asyncDispose`).
   */
  close(): Promise<void>;
  /** Same as `close()`: `await using opened = await openJsonlSessionLog(path)`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A session log backed by a JSONL file: reads what the file holds (cutting off a torn last line),
 * then appends new events to it with group commit. `sink.close()` when the session ends.
 *
 * A file with a checkpoint is read from its last one: the log then holds only the events after it
 * (`log.firstSeq`), and the session's index (prompt projection, open work, …) comes from the
 * checkpoint. Without one, or when it does not check out, or a line after it does not, the whole
 * file is replayed as it always was (so a damaged line is reported as before).
 *
 * @example
 * ```ts
 * await using session = await openJsonlSessionLog('.dsh/sessions/abc.jsonl');
 * const rt = createRuntime({ log: session.log, tools });
 * await rt.startTurn({ model, input: 'list the files' }).done;
 * // leaving the block closes the session: buffered events are written, then the lease is released
 * ```
 */
export async function openJsonlSessionLog(path: string, options: OpenJsonlSessionLogOptions = {}): Promise<OpenedJsonlSessionLog> {
  const { clock, checkpointEvery = DEFAULT_CHECKPOINT_EVERY, fromCheckpoint = true, lease: leaseOption, ...sinkOptions } = options;
  let sink: JsonlLogSink | undefined;
  let lostBeforeSink: Error | undefined;
  const given = leaseOption && 'release' in leaseOption ? leaseOption : undefined;
  if (given && given.file !== realpathSync(path)) throw new Error(`the lease given for ${path} is held on ${given.file}`);
  const lease =
    given ??
    (leaseOption === false
      ? undefined
      : await holdSessionLease(path, {
          ...(leaseOption as HoldSessionLeaseOptions | undefined),
          onLost: (e) => {
            if (sink) sink.abort(e);
            else lostBeforeSink = e;
            (leaseOption as HoldSessionLeaseOptions | undefined)?.onLost?.(e);
          },
        }));
  try {
    const opened = await openHeld(path, clock, checkpointEvery, fromCheckpoint, {
      ...sinkOptions,
      ...(lease && !given ? { onClosed: () => (sinkOptions.onClosed?.(), lease.release()) } : {}),
    });
    sink = opened.sink;
    if (lostBeforeSink) sink.abort(lostBeforeSink);
    const close = () => opened.sink.close();
    return { ...opened, ...(lease ? { lease } : {}), close, [Symbol.asyncDispose]: close };
  } catch (e) {
    if (!given) lease?.release();
    throw e;
  }
}

async function openHeld(
  path: string,
  clock: Clock | undefined,
  checkpointEvery: number,
  fromCheckpoint: boolean,
  sinkOptions: Omit<JsonlLogSinkOptions, 'path'>,
): Promise<Omit<OpenedJsonlSessionLog, 'lease' | 'close' | typeof Symbol.asyncDispose>> {
  const resumed = fromCheckpoint ? await resumeFromCheckpoint(path).catch(() => undefined) : undefined;
  let events: LogEvent[] = resumed?.events ?? [];
  let torn = resumed?.torn;
  if (!resumed) {
    try {
      ({ events, torn } = await readJsonlLog(path, { repair: true }));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  const sink = createJsonlLogSink({ ...sinkOptions, path });
  let log: SessionLog;
  let index: SessionIndex;
  // The log's index: the checkpoint's (it holds what came before it), then the events after it.
  const firstSeq = resumed ? resumed.index.lastSeq + 1 : undefined;
  index = resumed ? resumed.index : new SessionIndex();
  for (const e of events) index.apply(e);
  log = createMemoryLog({ clock, initial: events, sink, index, ...(firstSeq !== undefined ? { firstSeq } : {}) });
  if (checkpointEvery > 0) {
    const lastCheckpoint = events.findLastIndex((e) => e.type === 'session/checkpoint');
    writeCheckpoints(log, sink, index, checkpointEvery, {
      events: events.length - (lastCheckpoint + 1),
      // Without a checkpoint to go by, the first one waits only for `every` events.
      bytes: resumed ? resumed.bytesAfter : 0,
      checkpointBytes: resumed && lastCheckpoint === -1 ? resumed.checkpointBytes : 0,
    });
  }
  return { log, sink, ...(torn ? { torn } : {}), ...(resumed ? { resumedFrom: resumed.index.lastSeq } : {}) };
}

/** The index and events after the file's last checkpoint, or undefined to replay it all. */
async function resumeFromCheckpoint(
  path: string,
): Promise<{ index: SessionIndex; events: LogEvent[]; torn?: TornTail; bytesAfter: number; checkpointBytes: number } | undefined> {
  const found = await findLastCheckpoint(path);
  if (!found) return undefined;
  const index = SessionIndex.fromCheckpoint(found.event);
  if (!index) return undefined;
  const events: LogEvent[] = [];
  try {
    // Line numbers after a checkpoint assume one event per line, as dsh writes them (line n holds seq n).
    const r = await replayJsonlLog(path, (e) => events.push(e), {
      firstSeq: found.event.seq + 1,
      repair: true,
      start: { byte: found.end, line: found.event.seq + 1, checksummed: true },
    });
    const size = r.torn ? r.torn.offset : (await stat(path)).size;
    return { index, events, ...(r.torn ? { torn: r.torn } : {}), bytesAfter: size - found.end, checkpointBytes: found.end - found.start };
  } catch (e) {
    if (e instanceof JsonlLogError) return undefined; // the full replay reports it, with its true line
    throw e;
  }
}
