/**
 * Issue 10 item 5: a spilled 100 MiB output. Its log line holds the preview and the reference,
 * never the text; a page of it read by locator takes a window of about the page from the store;
 * grep by locator streams it in blocks; a replayed session still projects the same prompt.
 * (Peak RSS ÷ output is measured by bench W7, not here.)
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createFsSpillStore, type FsSpillStore } from '../../../src/adapters/spill/fsSpillStore.js';
import { openJsonlSessionLog, readJsonlLog } from '../../../src/adapters/log/jsonlLog.js';
import { createBuiltinTools } from '../../../src/adapters/tools/builtinTools.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { projectPrompt } from '../../../src/runtime/projection/prompt.js';
import { formatLog } from '../../../src/protocol/logText.js';
import { DEFAULT_LINE_INDEX_STRIDE } from '../../../src/runtime/spill/lineIndex.js';
import { SPILL_BLOCK_BYTES } from '../../../src/runtime/spill/spilledLines.js';
import type { SpillStore } from '../../../src/runtime/spill/spillStore.js';
import { DEFAULT_MAX_READ_BYTES } from '../../../src/adapters/tools/read.js';
import { tempDir } from '../workspaceFixture.js';

const MiB = 2 ** 20;
const stores: FsSpillStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.remove()));
});

/** The store, counting what its `read` hands out: bytes in all, and the largest single read. */
function counting(store: SpillStore) {
  const counted = Object.create(store) as SpillStore & { bytes: number; largest: number; reads: number };
  Object.assign(counted, { bytes: 0, largest: 0, reads: 0 });
  counted.read = async (locator, range) => {
    const chunk = await store.read(locator, range);
    const n = chunk.nextOffset - chunk.offset;
    counted.bytes += n;
    counted.reads++;
    counted.largest = Math.max(counted.largest, n);
    return chunk;
  };
  return counted;
}

/** Line i (1-based) of the big output: 100 bytes, numbered. */
const lineOf = (i: number) => `${String(i).padStart(8, '0')} ${'x'.repeat(90)}\n`;
const LINES = MiB; // 100 MiB of 100-byte lines

function bigOutput(): string {
  const blocks: string[] = [];
  for (let from = 1; from <= LINES; from += 65_536) {
    const part: string[] = [];
    for (let i = from; i < from + 65_536 && i <= LINES; i++) part.push(i === 777_777 ? `${String(i).padStart(8, '0')} needle ${'y'.repeat(83)}\n` : lineOf(i));
    blocks.push(part.join(''));
  }
  return blocks.join('');
}

describe('a spilled 100 MiB output', () => {
  it('logs under 1 MB, pages by reading about the page, greps in blocks, and replays', { timeout: 120_000 }, async () => {
    const dir = await tempDir();
    const fsStore = createFsSpillStore({ baseDir: dir });
    stores.push(fsStore);
    const store = counting(fsStore);
    const logPath = join(dir, 'session.jsonl');
    const { log, sink } = await openJsonlSessionLog(logPath, { fsync: false });
    const dump = defineTool({ name: 'dump', input: z.object({}), execute: () => bigOutput() });
    const { read, grep } = createBuiltinTools({ root: dir, spillStore: store });
    const rt = createRuntime({ tools: [dump, read, grep], spillStore: store, log });
    log.append({ type: 'turn/start', turnId: 'turn-1', input: 'dump it' });
    log.append({ type: 'step/start', turnId: 'turn-1', stepIndex: 0 });
    const at = { turnId: 'turn-1', stepIndex: 0 };

    const r = await rt.runCall({ callId: 'big', toolName: 'dump', input: {} }, { ...at, index: 0 }).result;
    expect(r.isError).toBe(false);
    const spill = r.metadata.spill as { locator: string; bytes: number; lines: number };
    expect(spill).toMatchObject({ bytes: 100 * MiB, lines: LINES });
    expect(r.value).toBeUndefined();
    await sink.flush();

    // The log line: preview, locator and byte count, not the text.
    const lines = (await readFile(logPath, 'utf8')).split('\n').filter(Boolean);
    const resultLine = lines.find((l) => l.includes('"type":"tool/result"') && l.includes('"callId":"big"'))!;
    expect(Buffer.byteLength(resultLine)).toBeLessThan(1_000_000);
    expect(resultLine).toContain(JSON.stringify(spill.locator));
    expect(resultLine).toContain(`"bytes":${100 * MiB}`);

    // A page in the middle: one window of at most stride + page bytes from the store.
    store.bytes = 0;
    const page = await rt.runCall({ callId: 'page', toolName: 'read', input: { locator: spill.locator, offset: 500_000, limit: 50 } }, { ...at, index: 1 }).result;
    expect(page.isError).toBe(false);
    expect(page.value).toMatchObject({ startLine: 500_000, endLine: 500_049, totalLines: LINES });
    expect(page.content.startsWith(lineOf(500_000) + lineOf(500_001))).toBe(true);
    expect(store.bytes).toBeLessThanOrEqual(DEFAULT_LINE_INDEX_STRIDE + DEFAULT_MAX_READ_BYTES + 16);

    // grep over the locator: the whole text, never more than a block per read.
    store.bytes = 0;
    store.largest = 0;
    const found = await rt.runCall({ callId: 'grep', toolName: 'grep', input: { locator: spill.locator, pattern: 'needle' } }, { ...at, index: 2 }).result;
    expect(found.content).toBe(`777777:${String(777_777).padStart(8, '0')} needle ${'y'.repeat(83)}\n`);
    expect(store.bytes).toBe(100 * MiB);
    expect(store.largest).toBeLessThanOrEqual(SPILL_BLOCK_BYTES + 4);
    await sink.close();

    // Resume/replay: the replayed log projects the preview with its locator, and `dsh log` shows it.
    const { events } = await readJsonlLog(logPath);
    const prompt = projectPrompt(events);
    const toolMessage = prompt.find((m) => m.role === 'tool')!;
    const first = (toolMessage.content as Array<{ toolCallId: string; output: { type: string; value: string } }>).find((p) => p.toolCallId === 'big')!;
    expect(first.output).toEqual({ type: 'text', value: r.content });
    expect(first.output.value).toContain(spill.locator);
    expect(formatLog(events)).toContain(`tool/spilled big: ${100 * MiB} bytes, ${LINES} lines → ${spill.locator}`);
  });
});
