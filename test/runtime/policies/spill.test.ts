import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemorySpillStore } from '../../../src/runtime/memorySpillStore.js';
import { readAllSpilled, type SpillStore } from '../../../src/runtime/spillStore.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { countLines, makePreview } from '../../../src/runtime/policies/spill.js';
import { utf8Length } from '../../../src/runtime/policies/utf8.js';

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

describe('spill policy through the runtime', () => {
  it('gives the model a head + tail preview with the locator; the store holds the full text byte for byte', async () => {
    const store = createMemorySpillStore();
    const rt = echoRuntime(store);
    const text = numbered(2000, 40) + 'ünïcödé tail 😀 last line';
    const r = await rt.runCall({ callId: 'c1', toolName: 'echo', input: { text } }).result;

    expect(r.isError).toBe(false);
    expect(r.value).toBe(text); // the canonical value is untouched: only the model's copy changes
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
