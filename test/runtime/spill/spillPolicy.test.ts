import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemorySpillStore } from '../../../src/runtime/spill/memorySpillStore.js';
import { readAllSpilled, type SpillStore } from '../../../src/runtime/spill/spillStore.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { ManualClock } from '../../../src/runtime/clock.js';
import type { ToolResult } from '../../../src/protocol/index.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { countLines, makePreview } from '../../../src/runtime/spill/spillPolicy.js';
import { pairSafeIndex, utf8Length, utf8LengthExceeds } from '../../../src/runtime/spill/utf8.js';

const bytesOf = (s: string) => Buffer.byteLength(s, 'utf8');

/** A tool that returns whatever text the test hands it, so sizes are exact. */
function echoRuntime(store: SpillStore, maxInlineBytes?: number) {
  const echo = defineTool({ name: 'echo', input: z.object({ text: z.string() }), execute: (a) => a.text });
  // The runtime installs the spill policy itself, last among post-execute listeners.
  return createRuntime({ tools: [echo], argLimits: { maxArgsChars: 1 << 24 }, spillStore: store, maxInlineBytes });
}

const numbered = (n: number, width = 60) => Array.from({ length: n }, (_, i) => `line ${String(i + 1).padStart(5, '0')} ${'x'.repeat(width)}\n`).join('');

describe('makePreview', () => {
  it('keeps whole lines at both ends when lines are short', () => {
    const text = numbered(1000);
    const p = makePreview(text, { headBytes: 1000, tailBytes: 1000 });
    expect(p.head.endsWith('\n')).toBe(true);
    expect(p.head.startsWith('line 00001 ')).toBe(true);
    expect(p.tail.startsWith('line ')).toBe(true);
    expect(p.tail.endsWith('line 01000 ' + 'x'.repeat(60) + '\n')).toBe(true);
    expect(p.totalLines).toBe(1000);
    expect(p.omittedLines).toBe(1000 - countLines(p.head) - countLines(p.tail));
    expect(p.firstOmittedLine).toBe(countLines(p.head) + 1);
  });

  it('never splits a multi-byte character, even in one long line', () => {
    const text = '😀é中'.repeat(5000);
    for (const budget of [1, 2, 3, 5, 7, 1001]) {
      const p = makePreview(text, { headBytes: budget, tailBytes: budget });
      expect(text.startsWith(p.head)).toBe(true);
      expect(text.endsWith(p.tail)).toBe(true);
      expect(p.head).not.toContain('\uFFFD');
      expect(p.tail).not.toContain('\uFFFD');
      expect(bytesOf(p.head)).toBeLessThanOrEqual(budget);
      expect(bytesOf(p.tail)).toBeLessThanOrEqual(budget);
    }
  });

  it('head + the saved bytes it left out + tail rebuild the original exactly (random Unicode, random limits)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.string({ unit: 'binary' }), fc.constant('\n'), fc.string({ unit: 'binary-ascii' })), { maxLength: 40 }).map((xs) => xs.join('')),
        fc.nat(300),
        fc.nat(300),
        async (text, headBytes, tailBytes) => {
          const store = createMemorySpillStore();
          const { locator } = await store.save(text, { callId: 'c', toolName: 't' });
          const p = makePreview(text, { headBytes, tailBytes });
          const middle = await store.read(locator, { offset: p.omittedFrom, length: p.omittedTo - p.omittedFrom });
          expect(middle.offset).toBe(p.omittedFrom);
          expect(middle.nextOffset).toBe(p.omittedTo);
          expect(p.head + middle.text + p.tail).toBe(text);
          expect(await readAllSpilled(store, locator)).toBe(text);
          expect(p.totalBytes).toBe(bytesOf(text));
          expect(p.omittedBytes).toBe(p.omittedTo - p.omittedFrom);
          if (p.omittedBytes > 0) {
            expect(bytesOf(p.head)).toBeLessThanOrEqual(headBytes);
            expect(bytesOf(p.tail)).toBeLessThanOrEqual(tailBytes);
            expect(p.omittedLines).toBe(p.lastOmittedLine - p.firstOmittedLine + 1);
          } else {
            expect(p.head + p.tail).toBe(text);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('utf8Length agrees with Buffer.byteLength', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => utf8Length(s) === bytesOf(s)));
    expect(utf8Length('a\uD800b')).toBe(bytesOf('a\uD800b'));
  });
});

/** makePreview as it was first written, over the whole text's encoding: the windowed one must agree. */
function referencePreview(text: string, headBytes: number, tailBytes: number) {
  const bytes = Buffer.from(text, 'utf8');
  const total = bytes.length;
  const isStart = (i: number) => i <= 0 || i >= total || (bytes[i]! & 0xc0) !== 0x80;
  const nls = (from: number, to: number) => bytes.subarray(from, Math.max(from, to)).reduce((n, b) => n + (b === 10 ? 1 : 0), 0);
  if (total <= headBytes + tailBytes) return { head: text, tail: '', omittedFrom: total, omittedTo: total, firstOmittedLine: 0, lastOmittedLine: 0 };
  let h = Math.min(headBytes, total);
  while (!isStart(h)) h--;
  if (h > 0) {
    const nl = bytes.lastIndexOf(10, h - 1);
    if (nl >= 0 && nl + 1 >= h / 2) h = nl + 1;
  }
  let t = Math.max(h, total - tailBytes);
  while (!isStart(t)) t++;
  if (t < total && !(t > 0 && bytes[t - 1] === 10)) {
    const nl = bytes.indexOf(10, t);
    if (nl >= 0 && nl + 1 < total && total - (nl + 1) >= (total - t) / 2) t = nl + 1;
  }
  const first = h < t ? nls(0, h) + 1 : 0;
  return {
    head: bytes.toString('utf8', 0, h),
    tail: bytes.toString('utf8', t),
    omittedFrom: h,
    omittedTo: t,
    firstOmittedLine: first,
    lastOmittedLine: h < t ? first + nls(h, t - 1) : 0,
  };
}

/** Text with every awkward thing: astral characters, lone surrogates of both kinds, newlines, multi-byte BMP. */
const awkwardText = (maxLength: number) =>
  fc
    .array(fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('\n', '😀', '\uD83D', '\uDE00', 'é', '中', '\n\n'), fc.string({ unit: 'binary-ascii' })), { maxLength })
    .map((xs) => xs.join(''));

describe('makePreview encodes only its windows', () => {
  it('agrees with a preview cut from the whole encoding (lone surrogates and pairs at the window edges included)', () => {
    fc.assert(
      fc.property(awkwardText(40), fc.nat(200), fc.nat(200), (text, headBytes, tailBytes) => {
        const p = makePreview(text, { headBytes, tailBytes });
        expect(p).toMatchObject(referencePreview(text, headBytes, tailBytes));
        expect(p.totalBytes).toBe(bytesOf(text));
        expect(p.totalLines).toBe(countLines(text));
      }),
      { numRuns: 1000 },
    );
  });

  it('agrees at every head and tail budget, around pairs, 3-byte characters and newlines next to the cuts', () => {
    const texts = [
      'ab\n😀c中\nd😀' + 'x'.repeat(30) + '😀e\n中😀f',
      'line one\nline two\n' + 'y'.repeat(20) + '\nabc\nxyzw', // ASCII: the windows hold exactly the budget
      'ab\ncd\n\nef\n' + 'z'.repeat(20) + '\n\nab\ncd\n',
      '\uDE00\n\uD83D' + 'q'.repeat(20) + '\uDE00😀\n\uD83D',
    ];
    for (const text of texts) {
      for (let headBytes = 0; headBytes <= 24; headBytes++) {
        for (let tailBytes = 0; tailBytes <= 24; tailBytes++) {
          expect(makePreview(text, { headBytes, tailBytes })).toMatchObject(referencePreview(text, headBytes, tailBytes));
        }
      }
    }
  });

  it('counts lines and bytes of a long text the same way (slices of the byte count cross pairs)', () => {
    // utf8Length counts long texts in slices of 21,845 UTF-16 units.
    for (const lead of [21_843, 21_844, 21_845, 21_846]) {
      for (const odd of ['😀', '\uD800', '\uDFFF', '中\n']) {
        const text = 'a'.repeat(lead) + odd + 'b\n'.repeat(25_000) + odd;
        expect(utf8Length(text)).toBe(bytesOf(text));
        expect(makePreview(text, { headBytes: 100, tailBytes: 100 })).toMatchObject(referencePreview(text, 100, 100));
      }
    }
  });
});

describe('UTF-8 arithmetic', () => {
  it('utf8Length agrees with Buffer.byteLength for long texts too (counted in slices)', () => {
    fc.assert(
      fc.property(awkwardText(20), fc.nat(3000), (piece, pad) => {
        const text = 'x'.repeat(pad) + piece + '😀'.repeat(pad) + piece;
        expect(utf8Length(text)).toBe(bytesOf(text));
      }),
      { numRuns: 200 },
    );
  });

  it('utf8LengthExceeds(text, n) is utf8Length(text) > n', () => {
    fc.assert(
      fc.property(awkwardText(20), fc.nat(120), (text, n) => utf8LengthExceeds(text, n) === bytesOf(text) > n),
      { numRuns: 1000 },
    );
  });

  it('pairSafeIndex never leaves half a surrogate pair on either side', () => {
    fc.assert(
      fc.property(awkwardText(20), fc.nat(200), (text, at) => {
        const i = pairSafeIndex(text, Math.min(at, text.length));
        expect(i === Math.min(at, text.length) || i === Math.min(at, text.length) - 1).toBe(true);
        expect(bytesOf(text.slice(0, i)) + bytesOf(text.slice(i))).toBe(bytesOf(text));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('spill policy through the runtime', () => {
  it('gives the model a head + tail preview with the locator; the store holds the full text byte for byte', async () => {
    const store = createMemorySpillStore();
    const rt = echoRuntime(store);
    const text = numbered(2000, 40) + 'ünïcödé tail 😀 last line';
    const r = await rt.runCall({ callId: 'c1', toolName: 'echo', input: { text } }).result;

    expect(r.isError).toBe(false);
    // The full text lives only in the store: the result (and its log event) carries the reference.
    expect(r.value).toBeUndefined();
    const spill = r.metadata.spill as { locator: string; bytes: number; lines: number; retrievalHint: string };
    expect(spill.bytes).toBe(bytesOf(text));
    expect(spill.lines).toBe(2001);
    expect(r.content).toContain('line 00001 ');
    expect(r.content).toContain('ünïcödé tail 😀 last line');
    expect(r.content).not.toContain('line 01000 ');
    expect(r.content).toContain(spill.locator);
    expect(r.content).toMatch(/bytes omitted \(lines \d+–\d+ of 2001/);
    expect(r.content).toContain('read(');
    expect(r.content).toContain('grep(');
    expect(bytesOf(r.content)).toBeLessThan(16_384);
    expect(await readAllSpilled(store, spill.locator)).toBe(text);

    const spilled = rt.log.events().filter((e) => e.type === 'tool/spilled');
    expect(spilled).toEqual([expect.objectContaining({ callId: 'c1', locator: spill.locator, bytes: bytesOf(text), lines: 2001 })]);
  });

  it('spills only content strictly larger than maxInlineBytes, counted in UTF-8 bytes', async () => {
    const store = createMemorySpillStore();
    const rt = echoRuntime(store, 100);
    const exact = 'é'.repeat(50); // 50 chars, 100 bytes
    const over = 'é'.repeat(50) + 'x'; // 101 bytes
    const atLimit = await rt.runCall({ callId: 'a', toolName: 'echo', input: { text: exact } }).result;
    const overLimit = await rt.runCall({ callId: 'b', toolName: 'echo', input: { text: over } }).result;
    expect(atLimit.content).toBe(exact);
    expect(atLimit.metadata.spill).toBeUndefined();
    expect(overLimit.metadata.spill).toBeDefined();
    expect(rt.log.events().filter((e) => e.type === 'tool/spilled').map((e) => e.callId)).toEqual(['b']);
  });

  it('keeps the result inline and records a warning when the store throws', async () => {
    const failing: SpillStore = {
      save: async () => {
        throw new Error('ENOSPC: no space left on device');
      },
      read: async () => {
        throw new Error('unreachable');
      },
    };
    const rt = echoRuntime(failing);
    const text = numbered(1000);
    const r = await rt.runCall({ callId: 'c9', toolName: 'echo', input: { text } }).result;
    expect(r.isError).toBe(false);
    expect(r.content).toBe(text);
    expect(r.metadata.spill).toBeUndefined();
    const warnings = rt.log.events().filter((e) => e.type === 'warning');
    expect(warnings).toEqual([expect.objectContaining({ callId: 'c9', code: 'SPILL_FAILED', message: expect.stringContaining('ENOSPC') })]);
    expect(rt.log.events().some((e) => e.type === 'tool/spilled')).toBe(false);
  });

  it('keeps the result inline and records a warning when the save never answers (its own deadline, before the hook timeout)', async () => {
    const clock = new ManualClock();
    let saves = 0;
    let abortedWith: unknown;
    const hung: SpillStore = {
      save: (_text, _meta, options) => {
        saves++;
        options?.signal?.addEventListener('abort', () => (abortedWith = options.signal?.reason));
        return new Promise<never>(() => {});
      },
      read: async () => {
        throw new Error('unreachable');
      },
    };
    const echo = defineTool({ name: 'echo', input: z.object({ text: z.string() }), execute: (a) => a.text });
    const rt = createRuntime({ tools: [echo], argLimits: { maxArgsChars: 1 << 24 }, spillStore: hung, clock });
    const text = numbered(1000);
    let settled: ToolResult | undefined;
    void rt.runCall({ callId: 'h1', toolName: 'echo', input: { text } }).result.then((r) => (settled = r));
    // Well past the default hook timeout (30 s): whichever deadline fires first decides the result.
    for (let i = 0; i < 40 && settled === undefined; i++) await clock.advance(1000);
    expect(saves).toBe(1);
    expect(settled).toBeDefined();
    const r = settled!;
    expect(r.isError).toBe(false);
    expect(r.content).toBe(text);
    expect(r.metadata.spill).toBeUndefined();
    expect(rt.log.events().some((e) => e.type === 'hook/failed')).toBe(false);
    const warnings = rt.log.events().filter((e) => e.type === 'warning');
    expect(warnings).toEqual([expect.objectContaining({ callId: 'h1', code: 'SPILL_FAILED', message: expect.stringContaining('did not answer within 10000 ms') })]);
    // The store is told the policy stopped waiting, so it can stop writing.
    expect(abortedWith).toBeInstanceOf(Error);
    expect(clock.now()).toBeLessThan(30_000);
  });

  it('never waits on the store longer than half the hook timeout', async () => {
    const clock = new ManualClock();
    const hung: SpillStore = { save: () => new Promise<never>(() => {}), read: async () => ({ text: '', offset: 0, nextOffset: 0, totalBytes: 0, done: true }) };
    const echo = defineTool({ name: 'echo', input: z.object({ text: z.string() }), execute: (a) => a.text });
    const rt = createRuntime({ tools: [echo], spillStore: hung, clock, limits: { hookTimeoutMs: 4000 }, spillSaveTimeoutMs: 60_000 });
    let settled: ToolResult | undefined;
    void rt.runCall({ callId: 'h2', toolName: 'echo', input: { text: numbered(1000) } }).result.then((r) => (settled = r));
    for (let i = 0; i < 10 && settled === undefined; i++) await clock.advance(500);
    expect(settled?.isError).toBe(false);
    expect(rt.log.events().filter((e) => e.type === 'warning').map((e) => (e as { message: string }).message)).toEqual([expect.stringContaining('within 2000 ms')]);
  });

  it('leaves small results alone and saves nothing', async () => {
    const store = createMemorySpillStore();
    const rt = echoRuntime(store);
    const r = await rt.runCall({ callId: 'c2', toolName: 'echo', input: { text: 'short' } }).result;
    expect(r.content).toBe('short');
    expect(store.size).toBe(0);
  });
});

describe('spill is installed by the runtime', () => {
  it('runs after every other post-execute listener, so it spills what they produced', async () => {
    const store = createMemorySpillStore();
    const rt = echoRuntime(store, 64);
    rt.hooks.on('tools/post-execute', 'redact', (draft) => ({ kind: 'accept', content: draft.content.replaceAll('secret', '[redacted]') }));
    const text = 'secret '.repeat(40);
    const result = await rt.runCall({ callId: 'r', toolName: 'echo', input: JSON.stringify({ text }) }).result;
    const locator = (result.metadata.spill as { locator: string }).locator;
    expect(await readAllSpilled(store, locator)).not.toContain('secret');
  });

  it('can be turned off with spillStore: false', async () => {
    const echo = defineTool({ name: 'echo', input: z.object({ text: z.string() }), execute: (a) => a.text });
    const rt = createRuntime({ tools: [echo], spillStore: false, maxInlineBytes: 8 });
    const result = await rt.runCall({ callId: 'r', toolName: 'echo', input: JSON.stringify({ text: 'x'.repeat(100) }) }).result;
    expect(result.content).toBe('x'.repeat(100));
    expect(rt.spillStore).toBeUndefined();
  });
});
