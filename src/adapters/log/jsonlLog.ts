/**
 * The session log on disk, for Node: an append-only JSONL file (one event per line) with group
 * commit, and a streaming replay that validates every line.
 *
 * A line is `<crc> <json>\n`: the CRC-32C of the JSON's UTF-8 bytes as 8 lowercase hex digits
 * (crc32c.ts), a space, the event's JSON. Replay verifies it first, so a flipped bit anywhere in
 * a line (its checksum included) is reported with the line's number. Lines written before lines
 * had checksums start with `{`; they replay as before, but only before the first line with one.
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
import { isAscii, isUtf8 } from 'node:buffer';
import { closeSync, createReadStream, fsync, openSync, write } from 'node:fs';
import { open } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { LogEventSchema, type LogEvent, type LogEventType } from '../../protocol/index.js';
import type { Clock } from '../../runtime/clock.js';
import { createMemoryLog, type LogSink, type SessionLog } from '../../runtime/log/sessionLog.js';
import { checksumHex, crc32c, crc32cOfUtf8, parseChecksum } from './crc32c.js';
import { REPLAY_WORKER_SOURCE, RUN_ARRAY, RUN_ASCII, RUN_CHECKSUMMED, RUN_FIELDS, RUN_UNCHECKSUMMED, type ReplayWorkerData, type ReplayWorkerMessage } from './jsonlLogWorker.js';

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
  /**
   * Undefined when event `seq` is already durable; otherwise starts a commit (unless one is in
   * flight: then the next group takes it) and resolves once the event is durable. The runtime
   * waits on it before a tool body runs, so the call's `tool/call` is on disk first.
   */
  whenDurable(seq: number): Promise<void> | undefined;
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
    write(event: LogEvent) {
      if (closed) throw new Error(`jsonl log ${options.path} is closed`);
      if (failure) return; // Reported once through onError; flush/close reject with it.
      const json = JSON.stringify(event);
      const line = `${checksumHex(crc32cOfUtf8(json))} ${json}\n`;
      buffer.push(line);
      bufferedChars += line.length;
      lastSeq = event.seq;
      if (commitOn.has(event.type) || bufferedChars >= maxBuffer) requestCommit();
    },
    flush,
    whenDurable,
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

/**
 * Why a line cannot be replayed. `MALFORMED_LINE`: it starts with neither `{` nor a checksum (8
 * lowercase hex digits and a space); `CHECKSUM_MISMATCH`: the checksum is not that of the rest of
 * the line (a flipped bit, a torn write followed by appends, an edit); `MISSING_CHECKSUM`: a line
 * without one after a line with one; `INVALID_UTF8`: bytes that are not UTF-8 (never replaced by
 * U+FFFD); `INVALID_JSON`; `INVALID_EVENT`: not a log event, or one with a key the schema does
 * not know (never dropped); `SEQ_GAP`.
 */
export type JsonlLogErrorCode = 'MALFORMED_LINE' | 'CHECKSUM_MISMATCH' | 'MISSING_CHECKSUM' | 'INVALID_UTF8' | 'INVALID_JSON' | 'INVALID_EVENT' | 'SEQ_GAP';

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
  /**
   * Files at least this many bytes long are read by a worker thread, which lets this thread parse
   * runs of lines in one go (default 32 MiB; `Infinity`: never). Same events, checks and errors.
   */
  parallelMinBytes?: number;
  /**
   * @internal How the worker cuts the file (tests use small sizes to cross block and run bounds),
   * and the size of the reads this thread replays alone while the worker starts (0: it waits).
   */
  parallelChunking?: Partial<Omit<ReplayWorkerData, 'fd'>> & { aloneReadBytes?: number };
  /**
   * @internal Filled in by a replay with the worker (for tests): runs parsed as arrays, runs parsed
   * line by line, whether the worker failed, the byte at which it started reading, and the time
   * (ms) this thread waited for the worker's blocks.
   */
  parallelStats?: { arrayRuns: number; lineRuns: number; workerFailed: boolean; workerStart?: number; waitMs?: number };
}

export interface ReplayResult {
  /** Events replayed. */
  readonly events: number;
  /** `seq` of the last event replayed (`firstSeq - 1` when none). */
  readonly lastSeq: number;
  /** Present when the file ended with a torn line. */
  readonly torn?: TornTail;
}

/** Whether a value is a valid event that zod would return unchanged (same keys, same values). */
type FastCheck = (value: unknown) => boolean;

/** The parts of a zod 4 schema definition the fast check reads (`schema._zod.def`). */
interface ZodDef {
  readonly type: string;
  readonly checks?: ReadonlyArray<{ readonly _zod: { readonly def: { readonly check: string; readonly format?: string; readonly value?: unknown; readonly inclusive?: boolean; readonly minimum?: number; readonly maximum?: number } } }>;
  readonly coerce?: boolean;
  readonly shape?: Readonly<Record<string, unknown>>;
  readonly catchall?: unknown;
  readonly innerType?: unknown;
  readonly element?: unknown;
  readonly options?: readonly unknown[];
  readonly values?: readonly unknown[];
  readonly entries?: Readonly<Record<string, unknown>>;
  readonly keyType?: unknown;
  readonly valueType?: unknown;
}

const defOf = (schema: unknown): ZodDef => (schema as { _zod: { def: ZodDef } })._zod.def;
const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Compiles a zod schema, once, into a plain predicate for the JSON values replay sees: true only
 * when the value is valid *and* zod's output would equal it (no key stripped, nothing coerced or
 * transformed). It knows only the kinds of schema and check the log events use and refuses to
 * compile anything else (undefined). It is a fast path, never the judge: whatever it does not
 * accept goes to the zod schema itself, whose verdict, output and error message stand.
 *
 * The predicate is generated as straight-line code (one function per schema, like zod's own
 * JIT), so every check is a monomorphic inline test; a tree of closures calling one another
 * costs several times as much per event.
 */
function compileFastCheck(schema: unknown): FastCheck | undefined {
  const consts: unknown[] = [];
  let vars = 0;
  // Not an object JSON.parse makes for `{…}` (an array's prototype is Array.prototype).
  const notPlain = (v: string) => `(typeof ${v} !== 'object' || ${v} === null || Object.getPrototypeOf(${v}) !== objectPrototype)`;
  const constant = (value: unknown) => `c[${consts.push(value) - 1}]`;
  const literal = (value: unknown) =>
    typeof value === 'string' || typeof value === 'boolean' || value === null || (typeof value === 'number' && Number.isFinite(value)) ? JSON.stringify(value) : constant(value);

  /** Appends statements that `return false` unless the value in variable `v` passes `schema`. */
  function emit(schema: unknown, v: string, out: string[]): boolean {
    const def = defOf(schema);
    if (def.coerce) return false;
    const tests: string[] = [];
    let minItems = 0;
    let maxItems = Infinity;
    for (const c of def.checks ?? []) {
      const cd = c._zod.def;
      if (def.type === 'number' && cd.check === 'number_format' && cd.format === 'safeint') tests.push(`!Number.isSafeInteger(${v})`);
      else if (def.type === 'number' && (cd.check === 'greater_than' || cd.check === 'less_than') && typeof cd.value === 'number' && Number.isFinite(cd.value)) {
        const op = cd.check === 'greater_than' ? (cd.inclusive ? '>=' : '>') : cd.inclusive ? '<=' : '<';
        tests.push(`!(${v} ${op} ${cd.value})`);
      } else if (def.type === 'array' && cd.check === 'min_length' && typeof cd.minimum === 'number') minItems = Math.max(minItems, cd.minimum);
      else if (def.type === 'array' && cd.check === 'max_length' && typeof cd.maximum === 'number') maxItems = Math.min(maxItems, cd.maximum);
      else return false;
    }
    switch (def.type) {
      case 'string':
      case 'boolean':
        out.push(`if (typeof ${v} !== '${def.type}') return false;`);
        return true;
      case 'unknown':
        return true;
      case 'number':
        out.push(`if (typeof ${v} !== 'number' || !Number.isFinite(${v})${tests.map((t) => ` || ${t}`).join('')}) return false;`);
        return true;
      case 'literal': {
        const values = def.values ?? [];
        out.push(values.length === 1 ? `if (${v} !== ${literal(values[0])}) return false;` : `if (!${constant(values)}.includes(${v})) return false;`);
        return true;
      }
      case 'enum':
        out.push(`if (!${constant(new Set(Object.values(def.entries ?? {})))}.has(${v})) return false;`);
        return true;
      case 'optional': {
        // Absent keys are the object's business (JSON has no `undefined`).
        const inner: string[] = [];
        if (!emit(def.innerType, v, inner)) return false;
        if (inner.length) out.push(`if (${v} !== undefined) {`, ...inner, '}');
        return true;
      }
      case 'array': {
        const i = `i${vars++}`;
        const e = `v${vars++}`;
        const inner: string[] = [];
        if (!emit(def.element, e, inner)) return false;
        out.push(`if (!Array.isArray(${v}) || ${v}.length < ${minItems}${maxItems < Infinity ? ` || ${v}.length > ${maxItems}` : ''}) return false;`);
        if (inner.length) out.push(`for (let ${i} = 0; ${i} < ${v}.length; ${i}++) {`, `const ${e} = ${v}[${i}];`, ...inner, '}');
        return true;
      }
      case 'record': {
        const keyDef = defOf(def.keyType);
        if (keyDef.type !== 'string' || keyDef.checks?.length || keyDef.coerce) return false;
        const k = `k${vars++}`;
        const e = `v${vars++}`;
        const inner: string[] = [];
        if (!emit(def.valueType, e, inner)) return false;
        // zod builds its output by assignment, where a `__proto__` key would not survive.
        out.push(`if (${notPlain(v)} || hasOwn.call(${v}, '__proto__')) return false;`);
        if (inner.length) out.push(`for (const ${k} in ${v}) {`, `const ${e} = ${v}[${k}];`, ...inner, '}');
        return true;
      }
      case 'union': {
        const options = (def.options ?? []).map((o) => compileFastCheck(o));
        if (options.length === 0 || options.some((o) => !o)) return false;
        out.push(`if (!(${options.map((o) => `${constant(o)}(${v})`).join(' || ')})) return false;`);
        return true;
      }
      case 'object': {
        if (def.catchall !== undefined) return false;
        const present = `n${vars++}`;
        out.push(`if (${notPlain(v)}) return false;`, `let ${present} = 0;`);
        for (const [key, field] of Object.entries(def.shape ?? {})) {
          const f = `v${vars++}`;
          const k = JSON.stringify(key);
          // zod's own notion of an optional key (a bare `z.unknown()` key is required in zod 4).
          const optional = (field as { _zod: { optin?: string } })._zod.optin === 'optional';
          const inner: string[] = [];
          if (!emit(field, f, inner)) return false;
          // A key Object.prototype also has would be read from it when absent: left to zod.
          if (key in Object.prototype) return false;
          out.push(`const ${f} = ${v}[${k}];`);
          if (optional) out.push(`if (${f} !== undefined) {`, `${present}++;`, ...inner, '}');
          else out.push(`if (${f} === undefined) return false;`, `${present}++;`, ...inner);
        }
        // A key the schema does not know would be stripped: zod's output is not the value.
        const keys = `n${vars++}`;
        const k = `k${vars++}`;
        out.push(`let ${keys} = 0;`, `for (const ${k} in ${v}) ${keys}++;`, `if (${keys} !== ${present}) return false;`);
        return true;
      }
      default:
        return false;
    }
  }

  const body: string[] = [];
  if (!emit(schema, 'v', body)) return undefined;
  let make: (c: unknown[], objectPrototype: object, hasOwn: (this: unknown, key: PropertyKey) => boolean) => FastCheck;
  try {
    make = new Function('c', 'objectPrototype', 'hasOwn', `return function fastCheck(v) {\n${body.join('\n')}\nreturn true;\n};`) as typeof make;
  } catch {
    return undefined; // code generation disallowed (--disallow-code-generation-from-strings): zod decides
  }
  return make(consts, Object.prototype, hasOwn);
}

/** Fast checks of the log's event types, by `type` (none: that type always goes to zod); compiled on first use. */
let fastChecks: ReadonlyMap<unknown, FastCheck | undefined> | undefined;
const compileFastChecks = () =>
  new Map(
    LogEventSchema.options.map((option) => {
      const values = defOf(defOf(option).shape?.type).values ?? [];
      return [values.length === 1 ? values[0] : Symbol('unmatched'), compileFastCheck(option)] as const;
    }),
  );

/**
 * Validates one parsed line against `LogEventSchema`, with the same verdict and output as
 * `LogEventSchema.safeParse`: the compiled fast check when it accepts the value (zod's output
 * would then equal the value, which is returned as it is), otherwise zod itself.
 */
export function validateLogEvent(value: unknown): { success: true; data: LogEvent } | { success: false; error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> } } {
  return fastAccepts(value) ? { success: true, data: value } : LogEventSchema.safeParse(value);
}

/** Whether the compiled fast check of the value's event type accepts it as it is. */
function fastAccepts(value: unknown): value is LogEvent {
  if (typeof value !== 'object' || value === null) return false;
  const fast = (fastChecks ??= compileFastChecks()).get((value as { type?: unknown }).type);
  return fast !== undefined && fast(value);
}

/**
 * Where zod's output differs from the parsed line, described for an error message (undefined
 * when it does not): the log's schemas have no defaults or transforms, so in practice a key zod
 * dropped because the schema does not know it (an own `__proto__` key included).
 */
function firstChange(input: unknown, output: unknown, path: string): string | undefined {
  if (input === output) return undefined;
  const at = (key: string | number) => (path ? `${path}.${key}` : String(key));
  if (typeof input !== 'object' || input === null || typeof output !== 'object' || output === null) {
    return Object.is(input, output) ? undefined : `${path || '(root)'}: the schema would change this value (it is reported, not changed)`;
  }
  if (Array.isArray(input) !== Array.isArray(output)) return `${path || '(root)'}: the schema would change this value (it is reported, not changed)`;
  if (Array.isArray(input)) {
    const out = output as unknown[];
    if (out.length !== input.length) return `${path || '(root)'}: the schema would change this array (it is reported, not changed)`;
    for (let i = 0; i < input.length; i++) {
      const d = firstChange(input[i], out[i], at(i));
      if (d !== undefined) return d;
    }
    return undefined;
  }
  const inObj = input as Record<string, unknown>;
  const outObj = output as Record<string, unknown>;
  for (const key of Object.keys(inObj)) {
    if (!hasOwn.call(outObj, key)) return `${at(key)}: unknown key ${JSON.stringify(key)} (it is reported, not dropped)`;
    const d = firstChange(inObj[key], outObj[key], at(key));
    if (d !== undefined) return d;
  }
  for (const key of Object.keys(outObj)) {
    if (!hasOwn.call(inObj, key)) return `${at(key)}: missing, and the schema would add it (it is reported, not added)`;
  }
  return undefined;
}

/** Files at least this large are replayed with a reader thread (see `ReplayOptions.parallelMinBytes`). */
export const DEFAULT_PARALLEL_MIN_BYTES = 32 << 20;

/** How the reader thread cuts the file (see jsonlLogWorker.ts); runs of 64 KiB parse fastest here. */
const WORKER_SETUP: Omit<ReplayWorkerData, 'fd'> = { blockBytes: 4 << 20, firstBlockBytes: 256 << 10, runBytes: 64 << 10, slots: 4 };

/**
 * Streams a JSONL log, checking each line's checksum (a line without one only before the first
 * line with one) and that its bytes are UTF-8, validating it against `LogEventSchema` (a key the
 * schema would drop is reported, not dropped) and checking that `seq` runs on without gaps, and
 * calls `onEvent` for each event in order. A torn last line is reported in the result (and cut
 * off with `repair`); any other bad line throws a `JsonlLogError` naming it.
 *
 * A large file (`parallelMinBytes`) is read by a worker thread (see jsonlLogWorker.ts) that cuts
 * it into runs of lines, checks every line's checksum and proves, for each run, that the run parsed
 * as one JSON array gives the lines' values, one per line; this thread then parses such a run with
 * one `JSON.parse` instead of one per line. The rest is the same either way: each value is validated and its `seq` checked
 * here, in file order, before `onEvent` sees it; and a run the worker does not vouch for (or
 * whose array does not parse) goes line by line, so errors, their lines and their messages are
 * those of the line-by-line replay. If the worker cannot start or fails, this thread carries on
 * alone from where it got to.
 */
export async function replayJsonlLog(path: string, onEvent: (event: LogEvent) => void, options: ReplayOptions = {}): Promise<ReplayResult> {
  const firstSeq = options.firstSeq ?? 1;
  let expected = firstSeq;
  let line = 0;
  let consumed = 0; // bytes of complete lines

  /** Whether a line with a checksum has been replayed: from then on every line must have one. */
  let checksummed = false;

  /** Validates the value of line `line`, checks its `seq`, and hands the event on. */
  const accept = (value: unknown) => {
    let event: LogEvent;
    if (fastAccepts(value)) event = value;
    else {
      const parsed = LogEventSchema.safeParse(value);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new JsonlLogError('INVALID_EVENT', path, line, `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
      }
      // zod drops keys it does not know (`__proto__` included): the line is reported instead.
      const changed = firstChange(value, parsed.data, '');
      if (changed !== undefined) throw new JsonlLogError('INVALID_EVENT', path, line, changed);
      event = parsed.data;
    }
    if (event.seq !== expected) throw new JsonlLogError('SEQ_GAP', path, line, `expected seq ${expected}, found ${event.seq}`);
    expected++;
    onEvent(event);
  };

  /**
   * Replays line `line + 1`, bytes [s, e) of `buf` (without its newline). `text`, when given, is
   * the same bytes from `base` on as a string (an ASCII read, decoded once); `utf8` says that
   * the bytes are known to be valid UTF-8.
   */
  const take = (buf: Buffer, s: number, e: number, text: string | undefined, base: number, utf8: boolean) => {
    line++;
    if (s === e) return; // a blank line carries nothing; line numbers stay true
    let from = s;
    if (buf[s] === 123) {
      // `{`: a line written before lines had checksums; only such lines may precede it.
      if (checksummed) throw new JsonlLogError('MISSING_CHECKSUM', path, line, 'a line without a checksum after lines with one (a line written by hand, or damaged)');
    } else {
      const want = e - s > 9 && buf[s + 8] === 32 ? parseChecksum(buf, s) : -1;
      if (want < 0) throw new JsonlLogError('MALFORMED_LINE', path, line, `a line starts with a checksum (8 lowercase hex digits and a space) or, written before checksums, with "{"; this one starts ${JSON.stringify(buf.toString('latin1', s, Math.min(e, s + 12)))}`);
      const got = crc32c(buf, s + 9, e);
      if (got !== want) {
        throw new JsonlLogError('CHECKSUM_MISMATCH', path, line, `the line says ${checksumHex(want)}, its content has ${checksumHex(got)} (a damaged line, or a torn write followed by appends: a log must be repaired before appending)`);
      }
      from = s + 9;
      checksummed = true;
    }
    let json: string;
    if (text !== undefined) json = text.slice(from - base, e - base);
    else {
      if (!utf8 && !isUtf8(buf.subarray(from, e))) throw new JsonlLogError('INVALID_UTF8', path, line, 'bytes that are not UTF-8 (they are not replaced: the line is reported)');
      json = buf.toString('utf8', from, e);
    }
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch (err) {
      throw new JsonlLogError('INVALID_JSON', path, line, `${(err as Error).message} (a torn write followed by appends? a log must be repaired before appending)`);
    }
    accept(value);
  };

  /** Replays the whole lines in bytes [from, to) of `buf` (`to` is just past a newline). */
  const takeLines = (buf: Buffer, from: number, to: number) => {
    const bytes = buf.subarray(from, to);
    // ASCII bytes decode to the same string either way: latin1 just copies them, where UTF-8
    // decoding costs about twice as much, and a log is mostly ASCII. Each line is then a slice.
    const ascii = isAscii(bytes);
    const text = ascii ? buf.toString('latin1', from, to) : undefined;
    const utf8 = ascii || isUtf8(bytes);
    for (let start = from; start < to; ) {
      const nl = buf.indexOf(10, start);
      take(buf, start, nl, text, from, utf8);
      start = nl + 1;
    }
  };

  /**
   * Replays the file from byte `offset` (the start of a line) on this thread alone; returns the
   * length of the unterminated end of the file, or -1 when `stop()` said so after a read (then
   * `consumed` is where the next line starts).
   *
   * Lines are cut on the newline byte (it never occurs inside a UTF-8 sequence), so each run of
   * complete lines is decoded in one go and only the unterminated rest is carried over. A line
   * begun in an earlier read is finished on its own, so a read is never copied to join the two.
   */
  const readAlone = async (offset: number, readBytes = 4 << 20, stop?: () => boolean): Promise<number> => {
    // The unterminated end of what has been read so far (a line that spans several reads is
    // joined once, when its newline arrives).
    let carry: Buffer[] = [];
    let carryBytes = 0;
    const stream = createReadStream(path, { highWaterMark: readBytes, start: offset });
    for await (const read of stream as AsyncIterable<Buffer>) {
      let from = 0;
      if (carryBytes > 0) {
        const first = read.indexOf(10);
        if (first === -1) {
          carry.push(read);
          carryBytes += read.length;
          continue;
        }
        const joined = Buffer.concat([...carry, read.subarray(0, first + 1)]);
        carry = [];
        carryBytes = 0;
        consumed += joined.length;
        takeLines(joined, 0, joined.length);
        from = first + 1;
      }
      const last = read.lastIndexOf(10);
      const rest = last < from ? from : last + 1;
      if (rest < read.length) {
        carry = [read.subarray(rest)];
        carryBytes = read.length - rest;
      }
      if (last < from) continue;
      consumed += last + 1 - from;
      takeLines(read, from, last + 1);
      if (stop?.()) {
        stream.destroy();
        return -1;
      }
    }
    return carryBytes;
  };

  /**
   * Replays the file (open as `fd`) with the reader thread; returns the length of the
   * unterminated end of the file, or -1 when the worker failed (the file is replayed up to
   * `consumed`, and the rest is left to `readAlone`).
   */
  const readWithWorker = async (fd: number): Promise<number> => {
    const stats = options.parallelStats;
    let worker: Worker;
    try {
      const { aloneReadBytes: _, ...chunking } = options.parallelChunking ?? {};
      const workerData: ReplayWorkerData = { ...WORKER_SETUP, ...chunking, fd };
      // No execArgv: the worker is plain JavaScript and needs no loader (`--import tsx`) of the parent's.
      worker = new Worker(REPLAY_WORKER_SOURCE, { eval: true, workerData, execArgv: [] });
    } catch {
      if (stats) stats.workerFailed = true;
      return -1;
    }
    const inbox: Array<Exclude<ReplayWorkerMessage, { type: 'ready' }>> = [];
    let wake: (() => void) | undefined;
    let ready = false;
    const receive = (m: ReplayWorkerMessage) => {
      if (m.type === 'ready') ready = true;
      else inbox.push(m);
      wake?.();
      wake = undefined;
    };
    worker.on('message', receive);
    worker.on('error', (e: Error) => receive({ type: 'error', message: e.message }));
    worker.on('exit', (code: number) => receive({ type: 'error', message: `exited with code ${code}` }));
    try {
      // The worker takes a while to start (tens of ms): meanwhile this thread replays alone, in
      // small reads, and the worker starts reading where it stopped.
      const headStart = options.parallelChunking?.aloneReadBytes ?? 256 << 10;
      if (headStart > 0) {
        const rest = await readAlone(0, headStart, () => ready || inbox.length > 0);
        if (rest !== -1) return rest; // all read before the worker was up
      }
      while (!ready && inbox.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      if (ready) worker.postMessage({ start: consumed });
      if (stats) stats.workerStart = consumed;
      for (;;) {
        if (inbox.length === 0) {
          const w0 = stats ? performance.now() : 0;
          while (inbox.length === 0) await new Promise<void>((resolve) => (wake = resolve));
          if (stats) stats.waitMs = (stats.waitMs ?? 0) + performance.now() - w0;
        }
        const m = inbox.shift()!;
        if (m.type === 'error' || (m.type === 'end' && m.bytes !== consumed)) {
          if (stats) stats.workerFailed = true;
          return -1;
        }
        if (m.type === 'end') return m.tornBytes;
        const buf = Buffer.from(m.buffer);
        const { runs, cap } = m;
        for (let r = 0; r < runs.length; r += RUN_FIELDS) {
          const start = runs[r]!;
          const end = runs[r + 1]!;
          const flags = runs[r + 4]!;
          let values: unknown;
          // The worker checked every line's checksum (and UTF-8) before offering the array; a run
          // with a line without one, after lines with one, goes line by line for its error.
          if (flags & RUN_ARRAY && !(checksummed && flags & RUN_UNCHECKSUMMED)) {
            const at = cap + runs[r + 2]!;
            try {
              values = JSON.parse(buf.toString(flags & RUN_ASCII ? 'latin1' : 'utf8', at, at + runs[r + 5]!));
            } catch {
              // Not valid JSON somewhere: line by line, for the error.
            }
          }
          if (Array.isArray(values) && values.length === runs[r + 3]) {
            for (let i = 0; i < values.length; i++) {
              line++;
              accept(values[i]);
            }
            if (flags & RUN_CHECKSUMMED) checksummed = true;
            if (stats) stats.arrayRuns++;
          } else {
            takeLines(buf, start, end);
            if (stats) stats.lineRuns++;
          }
          consumed += end - start;
        }
        worker.postMessage({ release: m.slot, buffer: m.buffer, cap }, [m.buffer]);
      }
    } finally {
      await worker.terminate(); // its listeners stay: a late 'error' is then just ignored
    }
  };

  let carryBytes = -1; // the unterminated end of the file, once read to the end
  const parallelMin = options.parallelMinBytes ?? DEFAULT_PARALLEL_MIN_BYTES;
  if (parallelMin !== Infinity) {
    // A file that cannot be opened is left to `readAlone`, for its usual error.
    const fh = await open(path, 'r').catch(() => undefined);
    if (fh) {
      try {
        if ((await fh.stat()).size >= parallelMin) carryBytes = await readWithWorker(fh.fd);
      } finally {
        await fh.close();
      }
    }
  }
  if (carryBytes === -1) carryBytes = await readAlone(consumed);

  let torn: TornTail | undefined;
  if (carryBytes > 0) {
    const bytes = carryBytes;
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
