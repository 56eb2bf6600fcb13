/**
 * The `spill` post-execute policy (SPEC §4, §8.7): output too large for the model's context is
 * saved whole in a spill store, and the model gets a head + tail preview, the locator and a hint
 * on how to read the rest. The saved text is whole; the result keeps only the preview and the
 * reference (`metadata.spill`), and the runtime drops its value (see spilledResult.ts), so the log
 * never holds the full text.
 */
import type { SpillStore } from './spillStore.js';
import type { CallView, ResultDraft } from '../../../machines/callStages.js';
import type { PostExecuteDecision } from '../../protocol/index.js';
import type { PostExecuteListener } from '../hooks.js';
import type { SessionLog } from '../log/sessionLog.js';
import { systemClock, type Clock } from '../clock.js';
import { pairSafeIndex, utf8Decode, utf8Encode, utf8Length, utf8LengthExceeds } from './utf8.js';

/** Results larger than this many UTF-8 bytes are spilled (16 KiB). */
export const DEFAULT_MAX_INLINE_BYTES = 16_384;
/**
 * How long the policy waits for the store's `save` (default 10 s): a third of the default hook
 * timeout, so a hung store is the policy's warning, never the pipeline's `HOOK_FAILED`.
 */
export const DEFAULT_SPILL_SAVE_TIMEOUT_MS = 10_000;

/** How much of a spilled result the model sees inline: head and tail, in lines and bytes. */
export interface PreviewLimits {
  /** Most UTF-8 bytes kept from the start. */
  readonly headBytes: number;
  /** Most UTF-8 bytes kept from the end. */
  readonly tailBytes: number;
}

/** A head + tail cut of a text; the bytes `[omittedFrom, omittedTo)` of its UTF-8 form are left out. */
export interface Preview {
  readonly head: string;
  readonly tail: string;
  readonly totalBytes: number;
  readonly totalLines: number;
  readonly omittedFrom: number;
  readonly omittedTo: number;
  readonly omittedBytes: number;
  /** 1-based lines touched by the omitted bytes (0 and 0 when nothing is omitted). */
  readonly firstOmittedLine: number;
  readonly lastOmittedLine: number;
  readonly omittedLines: number;
}

const NL = 0x0a;
/** Whether byte `i` of the window `bytes` (which ends on a character boundary) starts a character. */
const isCharStart = (bytes: Uint8Array, i: number) => i <= 0 || i >= bytes.length || (bytes[i]! & 0xc0) !== 0x80;

/** Lines as an editor counts them: a final line without a newline still counts. */
export function countLines(text: string): number {
  if (text === '') return 0;
  return countNewlines(text, 0, text.length) + (text.endsWith('\n') ? 0 : 1);
}

/** Newlines among the UTF-16 units `[from, to)` of `text` (no copy). */
function countNewlines(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf('\n', from); i !== -1 && i < to; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

function newlinesBefore(bytes: Uint8Array, end: number): number {
  let n = 0;
  for (let i = 0; i < end; i++) if (bytes[i] === NL) n++;
  return n;
}

/**
 * Where the head ends: after the last newline in budget if that keeps at least half of it, else
 * at a character start. `bytes` is the start of the text's encoding, cut on a character boundary,
 * and holds at least `budget` bytes unless it is the whole text.
 */
function headCut(bytes: Uint8Array, budget: number): number {
  let cut = Math.min(Math.max(0, Math.floor(budget)), bytes.length);
  while (!isCharStart(bytes, cut)) cut--;
  if (cut === 0) return 0; // lastIndexOf(x, -1) would search from the end
  const nl = bytes.lastIndexOf(NL, cut - 1);
  return nl >= 0 && nl + 1 >= cut / 2 ? nl + 1 : cut;
}

/**
 * Where the tail starts: after the first newline in budget if that keeps at least half of it,
 * else at a character start. `win` is the end of the text's encoding, from the character
 * boundary `base` (of `total` bytes), and reaches back at least one byte before `total - budget`
 * unless it is the whole text. Returns an offset into the whole encoding.
 */
function tailCut(win: Uint8Array, base: number, total: number, budget: number, floor: number): number {
  let cut = Math.max(floor, total - Math.max(0, Math.floor(budget)));
  while (!isCharStart(win, cut - base)) cut++;
  if (cut >= total) return total;
  // A newline right before the cut already makes it a line start.
  if (cut > 0 && win[cut - 1 - base] === NL) return cut;
  const i = win.indexOf(NL, cut - base);
  const nl = i >= 0 ? base + i : -1;
  return nl >= 0 && nl + 1 < total && total - (nl + 1) >= (total - cut) / 2 ? nl + 1 : cut;
}

/**
 * Cuts `text` into a line-aware head and tail within the byte limits, never inside a character.
 * Pure: `head` + the saved text's bytes `[omittedFrom, omittedTo)` + `tail` is the text again.
 *
 * Only the two windows the cuts can fall in are encoded, never the whole text: a character is at
 * least one byte, so the first `headBytes` UTF-16 units hold at least the first `headBytes` bytes,
 * and the last `tailBytes + 1` units at least the last `tailBytes + 1` bytes.
 */
export function makePreview(text: string, limits: PreviewLimits): Preview {
  const total = utf8Length(text);
  const totalLines = countLines(text);
  if (total <= limits.headBytes + limits.tailBytes) {
    return { head: text, tail: '', totalBytes: total, totalLines, omittedFrom: total, omittedTo: total, omittedBytes: 0, firstOmittedLine: 0, lastOmittedLine: 0, omittedLines: 0 };
  }
  const len = text.length;
  // Both windows are cut beside a surrogate pair, never through it, so their bytes are exactly
  // those of the whole text's encoding at the same places.
  let headEnd = Math.min(len, Math.max(0, Math.floor(limits.headBytes)));
  if (pairSafeIndex(text, headEnd) !== headEnd) headEnd++;
  const headWin = utf8Encode(text.slice(0, headEnd));
  const tailStart = pairSafeIndex(text, Math.max(0, len - Math.max(0, Math.floor(limits.tailBytes)) - 1));
  const tailWin = utf8Encode(text.slice(tailStart));
  const base = total - tailWin.length;

  const h = headCut(headWin, limits.headBytes);
  const t = tailCut(tailWin, base, total, limits.tailBytes, h);
  const head = utf8Decode(headWin.subarray(0, h));
  const tail = utf8Decode(tailWin.subarray(t - base));
  // UTF-16 units the head and the tail cover (a lone surrogate decodes to U+FFFD: one unit too).
  const headUnits = head.length;
  const tailFrom = len - tail.length;
  const firstOmittedLine = h < t ? newlinesBefore(headWin, h) + 1 : 0;
  // Newline bytes in [h, t - 1): the newlines of the omitted units but the last one.
  const lastOmittedLine = h < t ? firstOmittedLine + countNewlines(text, headUnits, tailFrom - 1) : 0;
  return {
    head,
    tail,
    totalBytes: total,
    totalLines,
    omittedFrom: h,
    omittedTo: t,
    omittedBytes: t - h,
    firstOmittedLine,
    lastOmittedLine,
    omittedLines: h < t ? lastOmittedLine - firstOmittedLine + 1 : 0,
  };
}

/** The hint that tells the model how to get at the rest of a spilled output. */
export function retrievalHint(locator: string, preview: Pick<Preview, 'firstOmittedLine' | 'totalLines'>): string {
  const loc = JSON.stringify(locator);
  const from = Math.max(1, preview.firstOmittedLine);
  return (
    `The full output (${preview.totalLines} lines) is saved under locator ${loc}. ` +
    `Read more with read({"locator": ${loc}, "offset": ${from}, "limit": 200}) (offset is a 1-based line), ` +
    `or search it with grep({"locator": ${loc}, "pattern": "..."}).`
  );
}

/** The model's copy of a spilled output: head, an omission marker, tail, locator and hint. */
export function renderSpilledContent(preview: Preview, locator: string): string {
  const parts: string[] = [preview.head];
  if (preview.head !== '' && !preview.head.endsWith('\n')) parts.push('\n');
  parts.push(
    `[… ${preview.omittedBytes} bytes omitted (lines ${preview.firstOmittedLine}–${preview.lastOmittedLine} of ${preview.totalLines}, ` +
      `bytes ${preview.omittedFrom}–${preview.omittedTo} of ${preview.totalBytes}) …]\n`,
  );
  parts.push(preview.tail);
  if (preview.tail !== '' && !preview.tail.endsWith('\n')) parts.push('\n');
  parts.push(`[output spilled: ${preview.totalBytes} bytes, ${preview.totalLines} lines; locator: ${locator}]\n`);
  parts.push(`[retrievalHint: ${retrievalHint(locator, preview)}]`);
  return parts.join('');
}

/** Options of the spill policy the runtime installs after every other post-execute listener. */
export interface SpillPolicyOptions {
  store: SpillStore;
  /** Content strictly larger than this many UTF-8 bytes is spilled (default 16 KiB). */
  maxInlineBytes?: number;
  /** Bytes of head and of tail kept in the preview (default: an eighth of `maxInlineBytes` each). */
  headBytes?: number;
  tailBytes?: number;
  /** Where `tool/spilled` and `warning` events go. */
  log: SessionLog;
  /** Deadline of one `save` (default 10 s); past it the save is abandoned and the output stays inline. */
  saveTimeoutMs?: number;
  /** Clock of that deadline (default the system clock). */
  clock?: Clock;
}

/** The store did not answer within the policy's deadline. */
class SpillSaveTimeout extends Error {
  constructor(ms: number) {
    super(`the spill store did not answer within ${ms} ms`);
  }
}

/**
 * `promise`, or a `SpillSaveTimeout` rejection after `ms` on `clock`, whichever comes first; the
 * signal is aborted at the deadline so a store that listens can stop writing.
 */
function withDeadline<T>(start: (signal: AbortSignal) => Promise<T>, ms: number, clock: Clock): Promise<T> {
  const controller = new AbortController();
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimeout(() => {
      const e = new SpillSaveTimeout(ms);
      controller.abort(e);
      reject(e);
    }, ms);
    let running: Promise<T>;
    try {
      running = Promise.resolve(start(controller.signal));
    } catch (e) {
      running = Promise.reject(e);
    }
    running.then(
      (v) => {
        clock.clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clock.clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** False when `text` cannot be over `maxBytes` in UTF-8: a UTF-16 unit is at most 3 bytes. */
export function mayExceed(text: string, maxBytes: number): boolean {
  return text.length * 3 > maxBytes;
}

/** The `spill` listener for `tools/post-execute`: spills oversized content, keeps it inline when the store fails. */
export function spillPolicy(options: SpillPolicyOptions): PostExecuteListener {
  const maxInlineBytes = options.maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES;
  // An eighth each keeps the preview (with marker and hint) far below the inline limit.
  const limits: PreviewLimits = {
    headBytes: options.headBytes ?? Math.floor(maxInlineBytes / 8),
    tailBytes: options.tailBytes ?? Math.floor(maxInlineBytes / 8),
  };
  const { store, log } = options;
  const clock = options.clock ?? systemClock;
  const saveTimeoutMs = Math.max(0, options.saveTimeoutMs ?? DEFAULT_SPILL_SAVE_TIMEOUT_MS);
  // Synchronous for the common small result (no promise, so the stage stays in one macrostep).
  return (draft, call) => {
    if (draft.metadata.spill !== undefined) return undefined;
    const content = draft.content;
    if (!utf8LengthExceeds(content, maxInlineBytes)) return undefined;
    return spill(draft, call, content);
  };

  async function spill(...[, call, content]: [ResultDraft, CallView, string]): Promise<PostExecuteDecision | undefined> {
    const where = { turnId: call.turnId, stepIndex: call.stepIndex, callId: call.callId };
    let locator: string;
    try {
      // A store that never answers must not hold the call up until the hook timeout fails it
      // closed: past its own deadline, the save is abandoned like a failed one.
      const meta = { callId: call.callId, toolName: call.toolName, turnId: call.turnId, stepIndex: call.stepIndex };
      ({ locator } = await withDeadline((signal) => store.save(content, meta, { signal }), saveTimeoutMs, clock));
      if (typeof locator !== 'string' || locator === '') throw new TypeError('the spill store returned no locator');
    } catch (e) {
      // A spill is an optimisation of the model's context: losing it must not fail the call.
      log.append({
        type: 'warning',
        ...where,
        code: 'SPILL_FAILED',
        message: `could not spill the output of "${call.toolName}"; it stays inline: ${describeError(e)}`,
        data: { bytes: utf8Length(content) },
      });
      return undefined;
    }
    const preview = makePreview(content, limits);
    log.append({ type: 'tool/spilled', ...where, locator, bytes: preview.totalBytes, lines: preview.totalLines });
    return {
      kind: 'accept',
      content: renderSpilledContent(preview, locator),
      metadata: { spill: { locator, bytes: preview.totalBytes, lines: preview.totalLines, retrievalHint: retrievalHint(locator, preview) } },
    };
  }
}

function describeError(e: unknown): string {
  try {
    return e instanceof Error ? e.message : String(e);
  } catch {
    return 'the spill store failed';
  }
}
