/**
 * The reading half of the JSONL session log: a streaming replay that checks and validates every
 * line (see jsonlSink.ts for the format).
 *
 * Replay verifies each line's checksum first, so a flipped bit anywhere in a line (its checksum
 * included) is reported with the line's number. Lines written before lines had checksums start
 * with `{`; they replay as before, but only before the first line with one. Each line's value is
 * validated (jsonlValidation.ts) and its `seq` checked, in file order.
 *
 * A resumed session does not replay its whole history: it starts from its last checkpoint
 * (jsonlCheckpoint.ts), so replay reads only the lines after it (`start`).
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { LogEvent } from '../../protocol/index.js';
import { checksumHex, crc32c, parseChecksum } from './crc32c.js';
import { checkLogEvent } from './jsonlValidation.js';

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

/** How a JSONL log is read back: where it starts, and what a torn last line does. */
export interface ReplayOptions {
  /** `seq` the first event must have (default 1). */
  firstSeq?: number;
  /** Cut a torn last line off the file, so appending can resume cleanly (default false). */
  repair?: boolean;
  /**
   * Start at this byte (the start of a line) instead of the file's start: `line` is that line's
   * number (for messages; default 1) and `checksummed` whether a line before it had a checksum.
   */
  start?: { byte: number; line?: number; checksummed?: boolean };
  /**
   * Reads on past a bad line: it is handed here (naming its line) and skipped, instead of thrown.
   * A seq gap is reported and the count goes on from the event found. For reading logs nobody
   * vouches for (`dsh policy replay`); never for a log about to be appended to.
   */
  onBadLine?: (error: JsonlLogError) => void;
  /**
   * Awaited after each read's lines were handed to `onEvent` (at most a few MiB of them): a
   * consumer that does asynchronous work per event keeps its backlog, and so memory, bounded.
   */
  drain?: () => Promise<void>;
}

/** What replaying a JSONL log found: how many events, the last `seq`, and a torn tail if any. */
export interface ReplayResult {
  /** Events replayed. */
  readonly events: number;
  /** `seq` of the last event replayed (`firstSeq - 1` when none). */
  readonly lastSeq: number;
  /** Present when the file ended with a torn line. */
  readonly torn?: TornTail;
  /**
   * Where the complete lines replayed end: pass it back as `start` (with `firstSeq: lastSeq + 1`)
   * to replay what has been appended since (a torn tail is read again then, complete or not).
   */
  readonly end: { readonly byte: number; readonly line: number; readonly checksummed: boolean };
}

/** The longest line a tolerant replay (`onBadLine`) holds in memory; a longer one is reported and skipped. */
export const MAX_TOLERATED_LINE_BYTES = 64 << 20;

/** Bytes per run of lines parsed as one array (runs of 64 KiB parse fastest here). */
const RUN_BYTES = 64 << 10;

/**
 * Streams a JSONL log, checking each line's checksum (a line without one only before the first
 * line with one) and that its bytes are UTF-8, validating it against `LogEventSchema` (a key the
 * schema would drop is reported, not dropped) and checking that `seq` runs on without gaps, and
 * calls `onEvent` for each event in order. A torn last line is reported in the result (and cut
 * off with `repair`); any other bad line throws a `JsonlLogError` naming it.
 */
export async function replayJsonlLog(path: string, onEvent: (event: LogEvent) => void, options: ReplayOptions = {}): Promise<ReplayResult> {
  const firstSeq = options.firstSeq ?? 1;
  let expected = firstSeq;
  let line = (options.start?.line ?? 1) - 1;
  let consumed = options.start?.byte ?? 0; // bytes of complete lines (from the start of the file)

  /** Whether a line with a checksum has been replayed: from then on every line must have one. */
  let checksummed = options.start?.checksummed ?? false;

  /** A bad line: thrown, or with `onBadLine` reported (the caller then skips the line). */
  const bad = (code: JsonlLogErrorCode, detail: string): void => {
    const error = new JsonlLogError(code, path, line, detail);
    if (!options.onBadLine) throw error;
    options.onBadLine(error);
    // A skipped line may have held the next seq: the count goes on from the next event found.
    resync = true;
  };
  let resync = false;

  /** Validates the value of line `line`, checks its `seq`, and hands the event on. */
  const accept = (value: unknown) => {
    const checked = checkLogEvent(value);
    if (!checked.ok) return bad('INVALID_EVENT', checked.detail);
    const event = checked.event;
    if (resync) {
      resync = false;
      expected = event.seq;
    }
    if (event.seq !== expected) {
      bad('SEQ_GAP', `expected seq ${expected}, found ${event.seq}`);
      expected = event.seq;
    }
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
      if (checksummed) return bad('MISSING_CHECKSUM', 'a line without a checksum after lines with one (a line written by hand, or damaged)');
    } else {
      const want = e - s > 9 && buf[s + 8] === 32 ? parseChecksum(buf, s) : -1;
      if (want < 0) return bad('MALFORMED_LINE', `a line starts with a checksum (8 lowercase hex digits and a space) or, written before checksums, with "{"; this one starts ${JSON.stringify(buf.toString('latin1', s, Math.min(e, s + 12)))}`);
      const got = crc32c(buf, s + 9, e);
      if (got !== want) {
        return bad('CHECKSUM_MISMATCH', `the line says ${checksumHex(want)}, its content has ${checksumHex(got)} (a damaged line, or a torn write followed by appends: a log must be repaired before appending)`);
      }
      from = s + 9;
      checksummed = true;
    }
    let json: string;
    if (text !== undefined) json = text.slice(from - base, e - base);
    else {
      if (!utf8 && !isUtf8(buf.subarray(from, e))) return bad('INVALID_UTF8', 'bytes that are not UTF-8 (they are not replaced: the line is reported)');
      json = buf.toString('utf8', from, e);
    }
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch (err) {
      return bad('INVALID_JSON', `${(err as Error).message} (a torn write followed by appends? a log must be repaired before appending)`);
    }
    accept(value);
  };

  /** Replays the whole lines in bytes [from, to) of `buf` (`to` is just past a newline). */
  const takeLines = (buf: Buffer, from: number, to: number) => {
    for (let s = from; s < to; ) {
      const e = to - s <= RUN_BYTES ? to : buf.indexOf(10, s + RUN_BYTES - 1) + 1 || to;
      if (!takeRunAsArray(buf, s, e)) takeRunLineByLine(buf, s, e);
      s = e;
    }
  };

  /** Replays the whole lines in bytes [from, to) of `buf` one by one: the reference path, and every error's. */
  const takeRunLineByLine = (buf: Buffer, from: number, to: number) => {
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
   * Replays the whole lines in bytes [from, to) with ONE `JSON.parse`, of the lines as an array
   * (one call over many lines costs much less than one per line): when every line has a checksum
   * that is right and the bytes are UTF-8, the run is copied with each checksum blanked (JSON
   * whitespace) and each newline made a comma, and parsed. It is used only when that gives as many
   * values as there are lines; otherwise (or when a line is not checksummed, blank, damaged, …)
   * false, and the run goes line by line, where every error is found and reported. Each value is
   * validated and its seq checked exactly as line by line.
   *
   * What it takes on trust: that a line whose checksum is right holds one JSON value, as the sink
   * writes it. A line with a right checksum is either the sink's (one `JSON.stringify` of an
   * event) or was written, checksum included, by hand.
   */
  const takeRunAsArray = (buf: Buffer, from: number, to: number): boolean => {
    let lines = 0;
    for (let s = from; s < to; ) {
      const nl = buf.indexOf(10, s);
      if (nl - s <= 9 || buf[s + 8] !== 32) return false;
      const want = parseChecksum(buf, s);
      if (want < 0 || crc32c(buf, s + 9, nl) !== want) return false;
      lines++;
      s = nl + 1;
    }
    const bytes = buf.subarray(from, to);
    const ascii = isAscii(bytes);
    if (!ascii && !isUtf8(bytes)) return false;
    const array = Buffer.allocUnsafe(to - from + 1);
    array[0] = 91; // [
    bytes.copy(array, 1);
    for (let s = 1; s < array.length; ) {
      array.fill(32, s, s + 9); // the checksum and its space
      const nl = array.indexOf(10, s + 9);
      array[nl] = 44; // ,
      s = nl + 1;
    }
    array[array.length - 1] = 93; // the last newline: ]
    let values: unknown;
    try {
      values = JSON.parse(array.toString(ascii ? 'latin1' : 'utf8'));
    } catch {
      return false;
    }
    if (!Array.isArray(values) || values.length !== lines) return false;
    for (const value of values) {
      line++;
      accept(value);
    }
    checksummed = true;
    return true;
  };

  /**
   * Replays the file from byte `offset` (the start of a line); returns the length of the
   * unterminated end of the file.
   *
   * Lines are cut on the newline byte (it never occurs inside a UTF-8 sequence), so each run of
   * complete lines is decoded in one go and only the unterminated rest is carried over. A line
   * begun in an earlier read is finished on its own, so a read is never copied to join the two.
   */
  const readAlone = async (offset: number, readBytes = 4 << 20): Promise<number> => {
    // The unterminated end of what has been read so far (a line that spans several reads is
    // joined once, when its newline arrives).
    let carry: Buffer[] = [];
    let carryBytes = 0;
    // Bytes of an over-long line being skipped (with `onBadLine` only: it was reported).
    let overlong = 0;
    const stream = createReadStream(path, { highWaterMark: readBytes, start: offset });
    for await (const read of stream as AsyncIterable<Buffer>) {
      let from = 0;
      if (overlong > 0) {
        const first = read.indexOf(10);
        if (first === -1) {
          overlong += read.length;
          continue;
        }
        consumed += overlong + first + 1;
        overlong = 0;
        from = first + 1;
      } else if (carryBytes > 0) {
        const first = read.indexOf(10);
        if (first === -1) {
          if (options.onBadLine && carryBytes + read.length > MAX_TOLERATED_LINE_BYTES) {
            line++;
            bad('MALFORMED_LINE', `a line longer than ${MAX_TOLERATED_LINE_BYTES} bytes; skipped`);
            overlong = carryBytes + read.length;
            carry = [];
            carryBytes = 0;
            continue;
          }
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
      if (options.drain) await options.drain();
    }
    return carryBytes;
  };

  const carryBytes = await readAlone(consumed);

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
  return { events: expected - firstSeq, lastSeq: expected - 1, torn, end: { byte: consumed, line: line + 1, checksummed } };
}

/** Reads a whole JSONL log into memory (see `replayJsonlLog` for the checks). */
export async function readJsonlLog(path: string, options: ReplayOptions = {}): Promise<{ events: LogEvent[]; lastSeq: number; torn?: TornTail; end: ReplayResult['end'] }> {
  const events: LogEvent[] = [];
  const r = await replayJsonlLog(path, (e) => events.push(e), options);
  return { events, lastSeq: r.lastSeq, torn: r.torn, end: r.end };
}

