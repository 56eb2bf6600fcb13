/**
 * Checkpoints of a JSONL session log (issue 16.1): a `session/checkpoint` line every so many
 * events records the session's index (src/runtime/log/sessionIndex.ts), and a resumed session
 * starts from the last one, reading only the lines after it instead of its whole history.
 *
 * Finding it: the file is read backwards from its end in blocks, looking for the bytes a
 * checkpoint line starts with (its checksum, a space, `{"type":"session/checkpoint",`). JSON has
 * no space outside strings and a quote inside a string is escaped, so those bytes right after a
 * newline can only start a checkpoint line. The line found must then check out like any replayed
 * line (checksum, UTF-8, JSON, schema); one that does not (a damaged line, a torn one) is not
 * used, and the caller replays the whole file, which reports it as replay always has.
 *
 * Writing one: after `every` events, and only once the log has grown by at least the size of the
 * last checkpoint since it, so checkpoints never make up much more than half of the file however
 * large the session's state grows.
 */
import { isUtf8 } from 'node:buffer';
import { open } from 'node:fs/promises';
import type { LogEventOf } from '../../protocol/index.js';
import type { SessionIndex } from '../../runtime/log/sessionIndex.js';
import type { SessionLog } from '../../runtime/log/sessionLog.js';
import { pendingSuspensionEvents } from '../../runtime/resume/pendingSuspension.js';
import { crc32c, parseChecksum } from './crc32c.js';
import type { JsonlLogSink } from './jsonlSink.js';
import { checkLogEvent } from './jsonlValidation.js';

/** Events between checkpoints, by default. */
export const DEFAULT_CHECKPOINT_EVERY = 5_000;

/** What a checkpoint line starts with, after its checksum. */
const MARKER = Buffer.from(' {"type":"session/checkpoint",', 'latin1');
const BLOCK = 1 << 20;

export interface FoundCheckpoint {
  readonly event: LogEventOf<'session/checkpoint'>;
  /** Byte offset where its line starts. */
  readonly start: number;
  /** Byte offset just past its newline: where the events after it start. */
  readonly end: number;
}

/**
 * The last checkpoint line of the file, when the last line that looks like one checks out;
 * undefined when there is none, or it does not (then the whole file is to be replayed).
 */
export async function findLastCheckpoint(path: string): Promise<FoundCheckpoint | undefined> {
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    // Marker starts are looked for in [from, to), going backwards; each read also takes the 9
    // bytes before (newline, checksum) and the marker's length after.
    for (let to = size; to > 0; ) {
      const from = Math.max(0, to - BLOCK);
      const rs = Math.max(0, from - 9);
      const buf = Buffer.allocUnsafe(Math.min(size, to + MARKER.length) - rs);
      const { bytesRead } = await fh.read(buf, 0, buf.length, rs);
      const window = buf.subarray(0, bytesRead);
      for (let i = window.lastIndexOf(MARKER); i !== -1; i = i > 0 ? window.lastIndexOf(MARKER, i - 1) : -1) {
        const p = rs + i;
        if (p < from || p >= to) continue;
        const lineStart = p - 8;
        if (lineStart < 0 || (lineStart > 0 && window[i - 9] !== 10)) continue;
        return await readCheckpointLine(fh, lineStart, size);
      }
      to = from;
    }
    return undefined;
  } finally {
    await fh.close();
  }
}

/** The checkpoint whose line starts at `start`, if the line checks out. */
async function readCheckpointLine(fh: Awaited<ReturnType<typeof open>>, start: number, size: number): Promise<FoundCheckpoint | undefined> {
  const chunks: Buffer[] = [];
  let length = 0;
  for (let at = start; at < size; ) {
    const buf = Buffer.allocUnsafe(Math.min(BLOCK * 4, size - at));
    const { bytesRead } = await fh.read(buf, 0, buf.length, at);
    if (bytesRead === 0) break;
    const nl = buf.subarray(0, bytesRead).indexOf(10);
    if (nl !== -1) {
      chunks.push(buf.subarray(0, nl));
      length += nl;
      const line = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
      const event = checkpointOf(line);
      return event ? { event, start, end: start + length + 1 } : undefined;
    }
    chunks.push(buf.subarray(0, bytesRead));
    length += bytesRead;
    at += bytesRead;
  }
  return undefined; // no newline: a torn last line
}

function checkpointOf(line: Buffer): LogEventOf<'session/checkpoint'> | undefined {
  if (line.length < 10 || line[8] !== 32) return undefined;
  const want = parseChecksum(line, 0);
  if (want < 0 || crc32c(line, 9, line.length) !== want) return undefined;
  const json = line.subarray(9);
  if (!isUtf8(json)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json.toString('utf8'));
  } catch {
    return undefined;
  }
  const checked = checkLogEvent(value);
  return checked.ok && checked.event.type === 'session/checkpoint' ? checked.event : undefined;
}

/**
 * Appends a checkpoint of `index` to `log` every `every` events (see the file comment). `since`:
 * the events and bytes already in the file after the last checkpoint, and that checkpoint's size.
 * Returns the unsubscribe function.
 */
export function writeCheckpoints(
  log: SessionLog,
  sink: Pick<JsonlLogSink, 'bytes'>,
  index: SessionIndex,
  every: number,
  since: { events: number; bytes: number; checkpointBytes: number },
): () => void {
  let events = since.events;
  let bytesAtLast = -since.bytes;
  let lastBytes = since.checkpointBytes;
  let scheduled = false;
  const write = () => {
    scheduled = false;
    if (events < every || sink.bytes - bytesAtLast < lastBytes) return;
    const before = sink.bytes;
    // A suspension still pending: its events (before this checkpoint) go with it.
    log.append(index.toCheckpoint(index.sawSuspension ? pendingSuspensionEvents(log) : []));
    lastBytes = sink.bytes - before;
    bytesAtLast = sink.bytes;
    events = 0;
  };
  return log.subscribe((e) => {
    if (e.type === 'session/checkpoint') return;
    events++;
    // Appended once the append that got here has returned (never from inside a subscriber, where
    // later subscribers would see the checkpoint before the event that caused it).
    if (!scheduled && events >= every && sink.bytes - bytesAtLast >= lastBytes) {
      scheduled = true;
      queueMicrotask(write);
    }
  });
}
