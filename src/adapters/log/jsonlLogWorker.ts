/**
 * The reader thread of a large replay (see `replayJsonlLog`): a worker that reads the log file,
 * cuts it into runs of whole lines and checks, byte by byte, that each run can be parsed by the
 * replaying thread with ONE `JSON.parse` of the run as an array instead of one per line.
 *
 * Why it pays: per-line `JSON.parse` calls are most of a replay's cost, and one call over
 * `[line1,line2,…]` costs noticeably less for the same objects. The worker also checks each
 * line's checksum (CRC-32C, see crc32c.ts) and that its bytes are UTF-8, so that this costs the
 * replaying thread nothing: a run is offered as an array only when every line's checksum is right
 * (or, for a log written before checksums, the line has none and follows none that had one).
 * But the array is the same as the lines only when every line is a JSON value of its own: a line cut inside an object or a string
 * would be glued to the next one by the comma and parse where the line alone does not. The worker
 * proves that it is not so, without parsing: a line passes when, scanned from its first byte,
 * its brackets never close more than they opened and are all closed at its end, outside any
 * string (a string is tracked by its quotes and backslash escapes), it has no comma outside them
 * (two values on one line) and it is not empty. If the array then parses (valid JSON), each comma
 * put in place of a newline sits between two values of the array, so its elements are exactly the
 * lines' values, in order, one per line (the replaying thread also checks there are as many). In
 * the array each line's checksum is overwritten with spaces (JSON whitespace), so a run is still
 * copied in one go. A run with a line that does not pass (a torn or glued line, a blank line, a
 * wrong checksum, bytes that are not UTF-8, …) is not offered as an array: the replaying thread parses it line by line, as always, which is also where every error
 * message comes from.
 *
 * The worker never parses or validates an event: all of that (and every verdict) stays on the
 * replaying thread, in file order. It only reads, scans and copies, so it keeps well ahead.
 *
 * It runs from source text (`eval: true`), not from a file: the same code then works from the
 * TypeScript sources (tsx, vitest) and from a build, with no loader or file path to resolve.
 *
 * Protocol. `workerData`: { fd, blockBytes, firstBlockBytes, runBytes, slots, failAfter? }. The
 * worker says { type: 'ready' } once it runs, and starts reading at the file position the main
 * thread then sends ({ start }): the main thread replays the start of the file itself meanwhile.
 * The worker has `slots` buffers; each holds an input area [0, cap) (file bytes, as read) and an
 * output area from `cap` on (the runs as arrays). A buffer is transferred (moved, not copied) with
 * its block and comes back with the release. Worker → main, in order:
 *   { type: 'block', slot, buffer, cap, bytes, runs }  the input area holds `bytes` bytes of whole
 *        lines; `runs` is flat: for each run [inStart, inEnd, outStart, lines, flags, outLength]
 *        (flags: 1 = the array form is in the output area at outStart, outLength bytes long;
 *        2 = ASCII; 4 = some line has a checksum; 8 = some line has none). The main thread
 *        hands the buffer back with { release: slot, buffer, cap }.
 *   { type: 'end', bytes, tornBytes }  end of file: `bytes` of whole lines in the file, and how many
 *        bytes of an unterminated last line follow them.
 *   { type: 'error', message }  reading failed; the main thread carries on without the worker.
 * The fd belongs to the main thread, which closes it; the worker only reads it at explicit positions.
 */

import { CRC32C_SOURCE } from './crc32c.js';

/** Flags of a run (see the protocol above). */
export const RUN_ARRAY = 1;
export const RUN_ASCII = 2;
export const RUN_CHECKSUMMED = 4;
export const RUN_UNCHECKSUMMED = 8;
/** Numbers per run in a block's `runs`. */
export const RUN_FIELDS = 6;

export interface ReplayWorkerData {
  fd: number;
  /** Bytes read per block (the input area's size; grown for a line longer than that). */
  blockBytes: number;
  /** Bytes read for the first block, doubled per block up to `blockBytes`, so the replaying thread can start early. */
  firstBlockBytes: number;
  /** Bytes per run (a run is this long or longer, up to the next newline). */
  runBytes: number;
  /** Number of buffers in rotation. */
  slots: number;
  /** For tests: fail (report an error) instead of sending block number `failAfter` (0-based). */
  failAfter?: number;
}

export type ReplayWorkerMessage =
  | { type: 'ready' }
  | { type: 'block'; slot: number; buffer: ArrayBuffer; cap: number; bytes: number; runs: number[] }
  | { type: 'end'; bytes: number; tornBytes: number }
  | { type: 'error'; message: string };

/** The worker's program (CommonJS, plain JavaScript). */
export const REPLAY_WORKER_SOURCE = String.raw`'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const { readSync } = require('node:fs');
const { isAscii, isUtf8 } = require('node:buffer');
${CRC32C_SOURCE}

const blockBytes = Math.max(1024, workerData.blockBytes);
const firstBlockBytes = Math.max(1, workerData.firstBlockBytes);
const runBytes = Math.max(1, workerData.runBytes);
const slotCount = Math.max(1, workerData.slots);
const { fd, failAfter } = workerData;

// A slot: one buffer = input area [0, cap) + output area [cap, cap + cap + cap / runBytes + 16).
// It is moved (transferred, not copied) to the main thread with each block, and back on release.
const outExtra = (cap) => Math.ceil(cap / runBytes) + 16; // one '[' per run, at most cap / runBytes + 1 runs
const views = (buffer, cap) => ({ buffer, cap, input: Buffer.from(buffer, 0, cap), output: Buffer.from(buffer, cap) });
const makeSlot = (cap) => views(new ArrayBuffer(cap + cap + outExtra(cap)), cap);
const slots = [];
const free = [];
for (let i = 0; i < slotCount; i++) free.push(i);
let wake = null;
let begin = null;
parentPort.on('message', (m) => {
  if (m.start !== undefined) return begin(m.start);
  slots[m.release] = views(m.buffer, m.cap);
  free.push(m.release);
  if (wake) { const w = wake; wake = null; w(); }
});
const acquire = () => (free.length ? Promise.resolve(free.shift()) : new Promise((r) => { wake = r; }).then(() => free.shift()));

/** The index of the quote that closes the string whose first character is at input[i], or -1 (none before e). */
function stringEnd(input, i, e) {
  for (; i < e; i++) {
    const d = input[i];
    if (d > 92) continue; // most letters: not one of the two below
    if (d === 34) return i; // "
    if (d === 92) i++; // \ escapes the next character
  }
  return -1;
}

/** Whether input[s, e) (one line, without its newline) is one JSON value as far as brackets, strings and commas tell. */
function oneValue(input, s, e) {
  if (s >= e) return false;
  let depth = 0;
  for (let i = s; i < e; i++) {
    const c = input[i];
    if (c === 34) {
      i = stringEnd(input, i + 1, e);
      if (i < 0) return false; // the line ends inside a string
    } else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) { if (--depth < 0) return false; }
    else if (c === 44) { if (depth === 0) return false; } // two values on one line
  }
  return depth === 0;
}

// What toArray found besides the line count: the run's flags and the array's length in bytes.
let runFlags = 0;
let outLength = 0;

/**
 * Copies input[s, e) (whole lines) to output[o] as '[' + lines joined by ',' + ']', each line's
 * checksum overwritten with spaces (JSON whitespace), and returns how many lines it holds, negated
 * when some line does not pass (then the output is not to be used). \`checksummed\`: a line before
 * this run had a checksum. Sets runFlags (without ASCII) and outLength.
 */
function toArray(input, output, s, e, o, checksummed) {
  output[o] = 91; // [
  output.set(input.subarray(s, e), o + 1);
  const shift = o + 1 - s;
  let lines = 0;
  let ok = true;
  let flags = 0;
  let summed = checksummed;
  for (let ls = s; ls < e; ) {
    const le = input.indexOf(10, ls);
    lines++;
    if (ok) {
      let js = ls;
      if (input[ls] === 123) { // { : written before checksums; none may have come before it
        flags |= ${RUN_UNCHECKSUMMED};
        if (summed) ok = false;
      } else {
        const want = le - ls > 9 && input[ls + 8] === 32 ? parseChecksum(input, ls) : -1;
        if (want < 0 || crc32c(input, ls + 9, le) !== want) ok = false;
        else {
          js = ls + 9;
          flags |= ${RUN_CHECKSUMMED};
          summed = true;
          for (let k = ls + shift; k < js + shift; k++) output[k] = 32; // the checksum becomes JSON whitespace
        }
      }
      if (ok && !oneValue(input, js, le)) ok = false;
      output[le + shift] = 44; // ,
    }
    ls = le + 1;
  }
  output[e - 1 + shift] = 93; // the last newline: ]
  runFlags = flags;
  outLength = e - s + 1;
  return ok ? lines : -lines;
}

/**
 * Runs the scan over made-up lines until it is compiled: interpreted, it is many times slower
 * than the main thread, which would wait for the first blocks. (The main thread replays alone
 * meanwhile, so this costs nothing there.)
 */
function warmUp() {
  const json = Buffer.from('{"type":"tool/result","seq":12,"s":"a\\"b\\\\c\\n d","o":{"x":[1,{"k":"v"}],"y":null}}', 'latin1');
  const line = Buffer.concat([Buffer.from(crc32c(json, 0, json.length).toString(16).padStart(8, '0') + ' ', 'latin1'), json, Buffer.from('\n', 'latin1')]);
  const input = Buffer.alloc(line.length * 600);
  for (let o = 0; o < input.length; o += line.length) line.copy(input, o);
  const output = Buffer.alloc(input.length + 16);
  for (let i = 0; i < 60; i++) toArray(input, output, 0, input.length, 0, false);
}

async function main() {
  warmUp();
  let position = await new Promise((resolve) => { begin = resolve; parentPort.postMessage({ type: 'ready' }); });
  let want = Math.min(firstBlockBytes, blockBytes);
  let carry = Buffer.alloc(0); // the unterminated end of the last block
  let total = position; // the file's bytes of whole lines so far (the main thread did those before position)
  let checksummed = false; // a line read by this worker had a checksum (the main thread tracks the lines before)
  for (let block = 0; ; block++) {
    if (block === failAfter) throw new Error('failing as asked (failAfter)');
    const id = await acquire();
    let slot = slots[id];
    if (!slot || slot.cap < Math.max(blockBytes, carry.length * 2)) slot = slots[id] = makeSlot(Math.max(blockBytes, carry.length * 2));
    carry.copy(slot.input, 0);
    let len = carry.length;
    let eof = false;
    let last = -1;
    for (;;) {
      const goal = Math.min(slot.cap, Math.max(len + want, len * 2));
      while (len < goal) {
        const n = readSync(fd, slot.input, len, goal - len, position);
        if (n === 0) { eof = true; break; }
        len += n;
        position += n;
      }
      last = len === 0 ? -1 : slot.input.lastIndexOf(10, len - 1);
      if (last !== -1 || eof) break;
      if (len === slot.cap) { // one line longer than the slot: a bigger one
        const bigger = makeSlot(slot.cap * 2);
        slot.input.copy(bigger.input, 0, 0, len);
        slot = slots[id] = bigger;
      }
    }
    want = Math.min(want * 2, blockBytes);
    const bytes = last + 1;
    carry = Buffer.from(slot.input.subarray(bytes, len)); // a copy: the slot goes to the main thread
    if (bytes === 0) { // no whole line left: the file ends here
      free.unshift(id);
      parentPort.postMessage({ type: 'end', bytes: total, tornBytes: carry.length });
      return;
    }
    const runs = [];
    let o = 0;
    for (let s = 0; s < bytes; ) {
      let e = s + runBytes >= bytes ? bytes : slot.input.indexOf(10, s + runBytes - 1) + 1;
      if (e <= s) e = bytes;
      const lines = toArray(slot.input, slot.output, s, e, o, checksummed);
      const bytesOfRun = slot.input.subarray(s, e);
      const ascii = isAscii(bytesOfRun);
      // Bytes that are not UTF-8 would decode to U+FFFD: line by line, where they are reported.
      const array = lines > 0 && (ascii || isUtf8(bytesOfRun));
      const flags = runFlags | (array ? ${RUN_ARRAY} : 0) | (ascii ? ${RUN_ASCII} : 0);
      if (runFlags & ${RUN_CHECKSUMMED}) checksummed = true;
      runs.push(s, e, o, lines < 0 ? -lines : lines, flags, outLength);
      o += outLength;
      s = e;
    }
    total += bytes;
    slots[id] = undefined;
    parentPort.postMessage({ type: 'block', slot: id, buffer: slot.buffer, cap: slot.cap, bytes, runs }, [slot.buffer]);
    if (eof) {
      parentPort.postMessage({ type: 'end', bytes: total, tornBytes: carry.length });
      return;
    }
  }
}
main().catch((e) => parentPort.postMessage({ type: 'error', message: String(e && e.message || e) }));
`;
