/**
 * The writing half of the JSONL session log: an append-only file, one event per line, with group
 * commit.
 *
 * A line is `<crc> <json>\n`: the CRC-32C of the JSON's UTF-8 bytes as 8 lowercase hex digits
 * (crc32c.ts), a space, the event's JSON (jsonlReplay.ts reads it back).
 *
 * Group commit (machines/groupCommit.ts decides when): `write` only buffers the event's line. At a commit point (by default a
 * `tool/result`, `step/end` or `turn/end`, or when the buffer grows large) the buffered lines are
 * written and fsynced in one go. While one write+fsync is in flight, later lines gather in the
 * buffer and go out together with the next one, so a burst of commit points costs one fsync, not
 * one each, and the session never waits for the disk. A line is committed only with its newline:
 * a crash mid-write leaves at most a torn last line, which replay reports (and can cut off).
 *
 * Any other event (a call's progress, a stream of text) is written within `lazyCommitMs` (default
 * 200 ms) even when no commit point follows, so a process killed while a long call runs leaves
 * that call's progress in the file (SPEC §9.1: what its INTERRUPTED result can tell).
 *
 * `whenDurable(seq)` asks for a commit on the next turn of the event loop: the runtime awaits it
 * before a tool body runs (see src/runtime/pipeline/execute.ts), so every call's `tool/call` is on
 * disk before its side effects can start; calls dispatched together share one write+fsync.
 */
import { closeSync, fsync, openSync, write } from 'node:fs';
import { createActor, waitFor } from 'xstate';
import { changesAnything, CLOSE, COMMIT, groupCommitMachine, LAZY, SOON } from '../../../machines/groupCommit.js';
import type { LogEvent, LogEventType } from '../../protocol/index.js';
import { durabilityWaiters } from '../../runtime/log/durabilityWaiters.js';
import type { LogSink } from '../../runtime/log/sessionLog.js';
import { checksumHex, crc32cOfUtf8 } from './crc32c.js';

/** How long an event that is no commit point may wait in the buffer (ms). */
export const DEFAULT_LAZY_COMMIT_MS = 200;

/** Event types after which buffered lines are made durable, unless told otherwise. */
export const DEFAULT_COMMIT_ON: readonly LogEventType[] = ['tool/result', 'step/end', 'turn/end'];

/** The JSONL sink: the file, and when its writes are committed (group commit). */
export interface JsonlLogSinkOptions {
  /** The log file; created if missing, appended to if present. */
  path: string;
  /** Event types that are commit points (default `tool/result`, `step/end`, `turn/end`). */
  commitOn?: readonly LogEventType[];
  /** Buffered bytes (UTF-16 units, roughly) that force a commit without a commit point (default 1 MiB). */
  maxBufferBytes?: number;
  /** An event that is no commit point is written at the latest this long after it (default 200 ms; 0: only at commit points). */
  lazyCommitMs?: number;
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
  const lazyMs = options.lazyCommitMs ?? DEFAULT_LAZY_COMMIT_MS;
  const fd = openSync(options.path, 'a', 0o600);

  let buffer: string[] = [];
  let bufferedChars = 0;
  let lastSeq = 0;
  let durableSeq = 0;
  let commits = 0;
  let bytes = 0;
  let closed = false;
  let failure: Error | undefined;
  const waiters = durabilityWaiters();

  function fail(e: unknown) {
    const error = e instanceof Error ? e : new Error(String(e));
    if (!failure) {
      failure = new Error(`jsonl log ${options.path}: ${error.message}`, { cause: error });
      options.onError?.(failure);
    }
    buffer = [];
    bufferedChars = 0;
    waiters.reject(failure);
  }

  // When a group goes out is the group-commit machine's (machines/groupCommit.ts); writing it is this.
  const groups = createActor(groupCommitMachine, {
    input: {
      port: {
        commit: () => {
          const groupSeq = lastSeq;
          if (buffer.length === 0) return Promise.resolve(groupSeq);
          const data = Buffer.from(buffer.join(''), 'utf8');
          buffer = [];
          bufferedChars = 0;
          return new Promise<number>((resolve, reject) => {
            const done = (e: Error | null) => {
              if (e) return reject(e);
              commits++;
              resolve(groupSeq);
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
          });
        },
        committed: (seq) => {
          durableSeq = Math.max(durableSeq, seq);
          waiters.settle(durableSeq);
        },
        wait: (when, due) => {
          if (when === 'soon') {
            const t = setImmediate(due);
            return () => clearImmediate(t);
          }
          const t = setTimeout(due, lazyMs);
          // A pending lazy write never keeps the process alive (close() flushes what is left).
          t.unref?.();
          return () => clearTimeout(t);
        },
        failed: fail,
      },
    },
  }).start();

  /** Tells the machine, unless it would change nothing (every event asks). */
  const ask = (a: typeof COMMIT | typeof SOON | typeof LAZY) => {
    if (changesAnything(groups.getSnapshot(), a.type)) groups.send(a);
  };

  function flush(): Promise<void> {
    if (failure) return Promise.reject(failure);
    if (lastSeq <= durableSeq && buffer.length === 0) return Promise.resolve();
    const p = waiters.add(lastSeq);
    ask(COMMIT);
    return p;
  }

  function whenDurable(seq: number): Promise<void> | undefined {
    if (failure) return Promise.reject(failure);
    // A seq this sink never wrote came from the file itself (a resumed session's replay): durable.
    const target = Math.min(seq, lastSeq);
    if (target <= durableSeq) return undefined;
    const p = waiters.add(target);
    // Committed on the next turn of the event loop, not now: calls dispatched in the same burst
    // (a parallel group, parts of one model stream) then share one write+fsync.
    ask(SOON);
    return p;
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
      if (commitOn.has(event.type) || bufferedChars >= maxBuffer) ask(COMMIT);
      else if (lazyMs > 0) ask(LAZY);
    },
    flush,
    whenDurable,
    abort(error: Error) {
      groups.send({ type: 'FAIL', error });
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await flush();
      } finally {
        // The file is closed once no group is being written to it.
        groups.send(CLOSE);
        await waitFor(groups, (s) => s.status === 'done');
        closeSync(fd);
        options.onClosed?.();
      }
    },
  };
}
