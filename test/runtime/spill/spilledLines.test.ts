import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pageLines } from '../../../src/adapters/tools/linePage.js';
import { createMemorySpillStore } from '../../../src/runtime/spill/memorySpillStore.js';
import { LineIndexBuilder } from '../../../src/runtime/spill/lineIndex.js';
import { readSpilledPage, spilledLineBlocks } from '../../../src/runtime/spill/spilledLines.js';
import type { SpillStore } from '../../../src/runtime/spill/spillStore.js';

const meta = { callId: 'c', toolName: 't' };
/** Texts with short and long lines, multi-byte characters, CRs, empty lines, and maybe no final newline. */
const texts = fc
  .array(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.constantFrom('\n', '\n\n', '\r\n', '😀', 'é中', 'x'.repeat(40))), { maxLength: 40 })
  .map((xs) => xs.join(''));

/** A store with only `save` and `read`: pages come from an index built by scanning. */
function plainStore(): SpillStore {
  const inner = createMemorySpillStore();
  return { save: (t, m) => inner.save(t, m), read: (l, r) => inner.read(l, r) };
}

describe('readSpilledPage', () => {
  it('gives exactly the page pageLines cuts from the whole text (any text, offset, limit, budget, stride)', async () => {
    await fc.assert(
      fc.asyncProperty(texts, fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 50 }), async (text, offset, limit, maxBytes, stride) => {
        for (const store of [createMemorySpillStore({ lineIndexStride: stride }), plainStore()]) {
          const { locator } = await store.save(text, meta);
          const page = await readSpilledPage(store, locator, offset, limit, maxBytes);
          expect(page).toEqual(pageLines(text, offset, limit, maxBytes));
        }
      }),
      { numRuns: 400 },
    );
  });

  it('reads one window of at most stride + page bytes, wherever the page is', async () => {
    const text = Array.from({ length: 20_000 }, (_, i) => `line ${i + 1} ${'z'.repeat(i % 97)}\n`).join('');
    const inner = createMemorySpillStore({ lineIndexStride: 4096 });
    let bytes = 0;
    const store: SpillStore = {
      save: (t, m) => inner.save(t, m),
      read: async (l, r) => {
        const c = await inner.read(l, r);
        bytes += c.nextOffset - c.offset;
        return c;
      },
      lineIndex: (l) => inner.lineIndex(l),
    };
    const { locator } = await store.save(text, meta);
    for (const offset of [1, 5000, 12_345, 19_990]) {
      bytes = 0;
      const page = await readSpilledPage(store, locator, offset, 20, 2000);
      expect(page).toEqual(pageLines(text, offset, 20, 2000));
      expect(bytes).toBeLessThanOrEqual(4096 + 2000 + 8);
    }
  });

  it('reports the full length of a line longer than the page, even far longer than the window', async () => {
    const long = 'é'.repeat(50_000);
    const text = `a\n${long}\nb\n${long}`;
    const store = createMemorySpillStore({ lineIndexStride: 1000 });
    const { locator } = await store.save(text, meta);
    for (const offset of [2, 4]) expect(await readSpilledPage(store, locator, offset, 5, 300)).toEqual(pageLines(text, offset, 5, 300));
  });
});

describe('spilledLineBlocks', () => {
  it('hands out whole lines, numbered, that join back to the text (any block size)', async () => {
    await fc.assert(
      fc.asyncProperty(texts, fc.integer({ min: 1, max: 30 }), async (text, blockBytes) => {
        const store = createMemorySpillStore();
        const { locator } = await store.save(text, meta);
        const blocks = [];
        for await (const b of spilledLineBlocks(store, locator, undefined, blockBytes)) blocks.push(b);
        expect(blocks.map((b) => b.text).join('')).toBe(text);
        let line = 1;
        for (const b of blocks) {
          expect(b.firstLine).toBe(line);
          line += b.text.split('\n').length - 1;
          if (b !== blocks.at(-1)) expect(b.text.endsWith('\n')).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('stops when the signal aborts', async () => {
    const store = createMemorySpillStore();
    const { locator } = await store.save('a\n'.repeat(1000), meta);
    const controller = new AbortController();
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const b of spilledLineBlocks(store, locator, controller.signal, 100)) {
          seen.push(b.firstLine);
          controller.abort(new Error('cancelled'));
        }
      })(),
    ).rejects.toThrow('cancelled');
    expect(seen).toEqual([1]);
  });
});

describe('LineIndexBuilder', () => {
  it('counts lines like an editor, whatever the pieces', () => {
    const enc = new TextEncoder();
    for (const [text, lines] of [['', 0], ['a', 1], ['a\n', 1], ['a\nb', 2], ['\n\n', 2]] as const) {
      const b = new LineIndexBuilder(2);
      for (const ch of enc.encode(text)) b.push(Uint8Array.of(ch));
      expect(b.finish().totalLines).toBe(lines);
    }
  });
});
