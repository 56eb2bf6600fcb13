/**
 * The session log on disk, for Node: an append-only JSONL file (one event per line) with group
 * commit, and a streaming replay that validates every line.
 *
 * Group commit: `write` only buffers the event's line. At a commit point (by default a
 * `tool/result`, `step/end` or `turn/end`, or when the buffer grows large) the buffered lines are
 * written and fsynced in one go. While one write+fsync is in flight, later lines gather in the
 * buffer and go out together with the next one, so a burst of commit points costs one fsync, not
 * one each, and the session never waits for the disk. A line is committed only with its newline:
 * a crash mid-write leaves at most a torn last line, which replay reports (and can cut off).
 */
import { closeSync, createReadStream, fsync, openSync, write } from 'node:fs';
import { open } from 'node:fs/promises';
import { LogEventSchema, type LogEvent, type LogEventType } from '../../protocol/index.js';
import type { Clock } from '../../runtime/clock.js';
import { createMemoryLog, type LogSink, type SessionLog } from '../../runtime/log/sessionLog.js';

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
}

/** A `LogSink` that persists events to a JSONL file with group commit. */
export interface JsonlLogSink extends LogSink {
  readonly path: string;
  /** `seq` of the last event known to be written and fsynced (0 before the first commit). */
  readonly durableSeq: number;
  /** Number of write+fsync groups so far (for inspection and benchmarks). */
  readonly commits: number;
  /** Makes every event written so far durable; rejects if the file could not be written. */
  flush(): Promise<void>;
  /** Flushes, then closes the file. Later writes throw. */
  close(): Promise<void>;
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
  let inFlight = false;
  let commitWanted = false;
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

  return {
    path: options.path,
    get durableSeq() {
      return durableSeq;
    },
    get commits() {
      return commits;
    },
    write(event: LogEvent) {
      if (closed) throw new Error(`jsonl log ${options.path} is closed`);
      if (failure) return; // Reported once through onError; flush/close reject with it.
      const line = JSON.stringify(event) + '\n';
      buffer.push(line);
      bufferedChars += line.length;
      lastSeq = event.seq;
      if (commitOn.has(event.type) || bufferedChars >= maxBuffer) requestCommit();
    },
    flush,
    async close() {
      if (closed) return;
      closed = true;
      try {
        await flush();
      } finally {
        fdClosed = true;
        closeSync(fd);
      }
    },
  };
}

export type JsonlLogErrorCode = 'INVALID_JSON' | 'INVALID_EVENT' | 'SEQ_GAP';

/** A log file that cannot be replayed as it is: which line, and why. */
export class JsonlLogError extends Error {
  constructor(
    readonly code: JsonlLogErrorCode,
    readonly path: string,
    /** 1-based line number. */
    readonly line: number,
    detail: string,
  ) {
    super(`${path}:${line}: ${code}: ${detail}`);
    this.name = 'JsonlLogError';
  }
}

/** An unterminated last line: the tail of a write cut short by a crash. It is not replayed. */
export interface TornTail {
  /** 1-based line number of the torn line. */
  readonly line: number;
  /** Byte offset where it starts (the size the file has once the tail is cut off). */
  readonly offset: number;
  readonly bytes: number;
  /** Whether replay cut it off the file (`repair: true`). */
  readonly repaired: boolean;
  readonly message: string;
}

export interface ReplayOptions {
  /** `seq` the first event must have (default 1). */
  firstSeq?: number;
  /** Cut a torn last line off the file, so appending can resume cleanly (default false). */
  repair?: boolean;
}

export interface ReplayResult {
  /** Events replayed. */
  readonly events: number;
  /** `seq` of the last event replayed (`firstSeq - 1` when none). */
  readonly lastSeq: number;
  /** Present when the file ended with a torn line. */
  readonly torn?: TornTail;
}

/**
 * Streams a JSONL log, validating each line against `LogEventSchema` and checking that `seq`
 * runs on without gaps, and calls `onEvent` for each event in order. A torn last line is reported
 * in the result (and cut off with `repair`); any other bad line throws a `JsonlLogError`.
 */
export async function replayJsonlLog(path: string, onEvent: (event: LogEvent) => void, options: ReplayOptions = {}): Promise<ReplayResult> {
  const firstSeq = options.firstSeq ?? 1;
  let expected = firstSeq;
  let line = 0;
  let consumed = 0; // bytes of complete lines
  let carry: Buffer | undefined;

  const take = (text: string) => {
    line++;
    if (text.length === 0) return; // a blank line carries nothing; line numbers stay true
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw new JsonlLogError('INVALID_JSON', path, line, `${(e as Error).message} (a torn write followed by appends? a log must be repaired before appending)`);
    }
    const parsed = LogEventSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new JsonlLogError('INVALID_EVENT', path, line, `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
    }
    const event = parsed.data;
    if (event.seq !== expected) throw new JsonlLogError('SEQ_GAP', path, line, `expected seq ${expected}, found ${event.seq}`);
    expected++;
    onEvent(event);
  };

  // Lines are cut on the newline byte (it never occurs inside a UTF-8 sequence), so each run of
  // complete lines is decoded in one go and only the unterminated rest is carried over.
  const stream = createReadStream(path, { highWaterMark: 4 << 20 });
  for await (const read of stream as AsyncIterable<Buffer>) {
    const chunk = carry ? Buffer.concat([carry, read]) : read;
    const last = chunk.lastIndexOf(10);
    if (last === -1) {
      carry = chunk;
      continue;
    }
    const text = chunk.toString('utf8', 0, last + 1);
    carry = last + 1 < chunk.length ? chunk.subarray(last + 1) : undefined;
    consumed += last + 1;
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      take(text.slice(start, nl));
      start = nl + 1;
    }
  }

  let torn: TornTail | undefined;
  if (carry?.length) {
    const bytes = carry.length;
    let repaired = false;
    if (options.repair) {
      const fh = await open(path, 'r+');
      try {
        await fh.truncate(consumed);
        await fh.sync();
      } finally {
        await fh.close();
      }
      repaired = true;
    }
    torn = {
      line: line + 1,
      offset: consumed,
      bytes,
      repaired,
      message: `${path}:${line + 1}: torn last line (${bytes} bytes without a newline, from byte ${consumed}); not replayed${repaired ? ', cut off the file' : ''}`,
    };
  }
  return { events: expected - firstSeq, lastSeq: expected - 1, torn };
}

/** Reads a whole JSONL log into memory (see `replayJsonlLog` for the checks). */
export async function readJsonlLog(path: string, options: ReplayOptions = {}): Promise<{ events: LogEvent[]; lastSeq: number; torn?: TornTail }> {
  const events: LogEvent[] = [];
  const r = await replayJsonlLog(path, (e) => events.push(e), options);
  return { events, lastSeq: r.lastSeq, torn: r.torn };
}

export interface OpenJsonlSessionLogOptions extends Omit<JsonlLogSinkOptions, 'path'> {
  clock?: Clock;
}

/**
 * A session log backed by a JSONL file: replays what the file holds (cutting off a torn last
 * line), then appends new events to it with group commit. `sink.close()` when the session ends.
 */
export async function openJsonlSessionLog(
  path: string,
  options: OpenJsonlSessionLogOptions = {},
): Promise<{ log: SessionLog; sink: JsonlLogSink; torn?: TornTail }> {
  let events: LogEvent[] = [];
  let torn: TornTail | undefined;
  try {
    ({ events, torn } = await readJsonlLog(path, { repair: true }));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const sink = createJsonlLogSink({ ...options, path });
  return { log: createMemoryLog({ clock: options.clock, initial: events, sink }), sink, torn };
}
