/**
 * The writing half of the JSONL session log: an append-only file, one event per line, with group
 * commit.
 *
 * A line is `<crc> <json>\n`: the CRC-32C of the JSON's UTF-8 bytes as 8 lowercase hex digits
 * (crc32c.ts), a space, the event's JSON (jsonlReplay.ts reads it back).
 *
 * Group commit: `write` only buffers the event's line. At a commit point (by default a
 * `tool/result`, `step/end` or `turn/end`, or when the buffer grows large) the buffered lines are
 * written and fsynced in one go. While one write+fsync is in flight, later lines gather in the
 * buffer and go out together with the next one, so a burst of commit points costs one fsync, not
 * one each, and the session never waits for the disk. A line is committed only with its newline:
 * a crash mid-write leaves at most a torn last line, which replay reports (and can cut off).
 *
 * `whenDurable(seq)` asks for a commit on the next turn of the event loop: the runtime awaits it
 * before a tool body runs (see src/runtime/durableDispatch.ts), so every call's `tool/call` is on
 * disk before its side effects can start; calls dispatched together share one write+fsync.
 */
import { closeSync, fsync, openSync, write } from 'node:fs';
import type { LogEvent, LogEventType } from '../../protocol/index.js';
import type { LogSink } from '../../runtime/log/sessionLog.js';
import { checksumHex, crc32cOfUtf8 } from './crc32c.js';

/** Event types after which buffered lines are made durable, unless told otherwise. */
export const DEFAULT_COMMIT_ON: readonly LogEventType[] = ['tool/result', 'step/end', 'turn/end'];

export interface JsonlLogSinkOptions {
  /** The log file; created if missing, appended to if present. */
  path: string;
  /** Event types that are commit points (default `tool/result`, `step/end`, `turn/end`). */
  commitOn?: readonly LogEventType[];
  /** Buffered bytes (UTF-16 units, roughly) that force a commit without a commit point (default 1 MiB). */
  maxBufferBytes?: number;
  /** fsync after each group write (default true). Off only for throwaway logs. */
  fsync?: boolean;
  /** Called once with the first I/O error; later writes are dropped and `flush`/`close` reject with it. */
  onError?: (error: Error) => void;
  /** Called once the file is closed (by `close`, whatever the flush did). */
  onClosed?: () => void;
}

/** A `LogSink` that persists events to a JSONL file with group commit. */
export interface JsonlLogSink extends LogSink {
  readonly path: string;
  /** `seq` of the last event known to be written and fsynced (0 before the first commit). */
  readonly durableSeq: number;
  /** Number of write+fsync groups so far (for inspection and benchmarks). */
  readonly commits: number;
  /** Length of the lines written so far (UTF-16 units: bytes for ASCII), durable or not. */
  readonly bytes: number;
  /** Makes every event written so far durable; rejects if the file could not be written. */
  flush(): Promise<void>;
  /**
   * Undefined when event `seq` is already durable; otherwise starts a commit (unless one is in
   * flight: then the next group takes it) and resolves once the event is durable. The runtime
   * waits on it before a tool body runs, so the call's `tool/call` is on disk first.
   */
  whenDurable(seq: number): Promise<void> | undefined;
  /** Flushes, then closes the file. Later writes throw. */
  close(): Promise<void>;
  /**
   * Fails the sink now (this process may no longer write the file: its lease was taken over):
   * what is buffered is dropped, waiters reject with `error`, later writes are dropped, `flush`
   * rejects. A write already handed to the OS may still land.
   */
  abort(error: Error): void;
}

/** Opens (or creates) a JSONL log file for appending and returns its group-commit sink. */
export function createJsonlLogSink(options: JsonlLogSinkOptions): JsonlLogSink {
  const commitOn = new Set<string>(options.commitOn ?? DEFAULT_COMMIT_ON);
  const maxBuffer = options.maxBufferBytes ?? 1 << 20;
  const doSync = options.fsync ?? true;
  const fd = openSync(options.path, 'a', 0o600);

  let buffer: string[] = [];
  let bufferedChars = 0;
  let lastSeq = 0;
  let durableSeq = 0;
  let commits = 0;
  let bytes = 0;
  let inFlight = false;
  let commitWanted = false;
  let durableSoon = false; // a commit for whenDurable is scheduled
  let closed = false;
  let fdClosed = false;
  let failure: Error | undefined;
  const waiters: Array<{ seq: number; resolve: () => void; reject: (e: Error) => void }> = [];

  function fail(e: unknown) {
    const error = e instanceof Error ? e : new Error(String(e));
    if (!failure) {
      failure = new Error(`jsonl log ${options.path}: ${error.message}`, { cause: error });
      options.onError?.(failure);
    }
    buffer = [];
    bufferedChars = 0;
    for (const w of waiters.splice(0)) w.reject(failure);
  }

  function settleWaiters() {
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (waiters[i]!.seq <= durableSeq) waiters.splice(i, 1)[0]!.resolve();
    }
  }

  /** Writes and fsyncs everything buffered now; loops while more was asked for meanwhile. */
  function startGroup() {
    if (failure || fdClosed) return;
    if (buffer.length === 0) {
      settleWaiters();
      return;
    }
    const data = Buffer.from(buffer.join(''), 'utf8');
    const groupSeq = lastSeq;
    buffer = [];
    bufferedChars = 0;
    commitWanted = false;
    inFlight = true;
    const done = (e: Error | null) => {
      inFlight = false;
      if (e) return fail(e);
      commits++;
      durableSeq = groupSeq;
      settleWaiters();
      if (commitWanted || waiters.length) startGroup();
    };
    const writeFrom = (offset: number) => {
      write(fd, data, offset, data.length - offset, null, (e, written) => {
        if (e) return done(e);
        if (offset + written < data.length) return writeFrom(offset + written);
        if (doSync) fsync(fd, done);
        else done(null);
      });
    };
    writeFrom(0);
  }

  function requestCommit() {
    commitWanted = true;
    if (!inFlight) startGroup();
  }

  function flush(): Promise<void> {
    if (failure) return Promise.reject(failure);
    if (lastSeq <= durableSeq && buffer.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      waiters.push({ seq: lastSeq, resolve, reject });
      requestCommit();
    });
  }

  function whenDurable(seq: number): Promise<void> | undefined {
    if (failure) return Promise.reject(failure);
    // A seq this sink never wrote came from the file itself (a resumed session's replay): durable.
    const target = Math.min(seq, lastSeq);
    if (target <= durableSeq) return undefined;
    return new Promise((resolve, reject) => {
      waiters.push({ seq: target, resolve, reject });
      // The commit starts on the next turn of the event loop, not now: calls dispatched in the
      // same burst (a parallel group, parts of one model stream) then share one write+fsync.
      if (!durableSoon) {
        durableSoon = true;
        setImmediate(() => {
          durableSoon = false;
          requestCommit();
        });
      }
    });
  }

  return {
    path: options.path,
    get durableSeq() {
      return durableSeq;
    },
    get commits() {
      return commits;
    },
    get bytes() {
      return bytes;
    },
    write(event: LogEvent) {
      if (closed) throw new Error(`jsonl log ${options.path} is closed`);
      if (failure) return; // Reported once through onError; flush/close reject with it.
      const json = JSON.stringify(event);
      const line = `${checksumHex(crc32cOfUtf8(json))} ${json}\n`;
      buffer.push(line);
      bufferedChars += line.length;
      bytes += line.length;
      lastSeq = event.seq;
      if (commitOn.has(event.type) || bufferedChars >= maxBuffer) requestCommit();
    },
    flush,
    whenDurable,
    abort(error: Error) {
      fail(error);
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await flush();
      } finally {
        fdClosed = true;
        closeSync(fd);
        options.onClosed?.();
      }
    },
  };
}
