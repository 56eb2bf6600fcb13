/**
 * W7, run in a child process of its own so its peak RSS is its own: one tool call whose body
 * returns a 100 MiB text, through the `spill` post-execute policy, the filesystem spill store and
 * a JSONL session log (fsync on); then the built-in `read` fetches 200-line pages of the spilled
 * output by its locator.
 * Prints one JSON line: { ok, inputBytes, baselineRss, peakRss, peakRssOverInput, ms, logBytes,
 * pageReadMs, pageStoreBytes } or { ok: false, reason }.
 *
 * peakRssOverInput = (peak RSS − RSS just before the call) / input size. The output is created
 * inside the call, so 1.0 would mean the pipeline held the output once and copied nothing.
 * logBytes = bytes the call added to the JSONL log (its tool/call, tool/spilled and tool/result).
 * pageReadMs = median time of a `read({ locator, offset, limit: 200 })` in the middle of the
 * output; pageStoreBytes = bytes that read took from the spill store.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { openJsonlSessionLog } from '../../src/adapters/log/jsonlLog.js';
import { createBuiltinTools } from '../../src/adapters/tools/builtinTools.js';
import type { SpillStore } from '../../src/runtime/spill/spillStore.js';

const MiB = 2 ** 20;
const size = Number(process.argv[2] ?? 100) * MiB;

/**
 * This process's peak RSS. On Linux, `VmHWM` of /proc/self/status, reset to the current RSS first
 * (clear_refs 5) where allowed. Not `getrusage` maxRSS: Linux carries the pre-exec high-water mark
 * into it, i.e. the RSS of the parent that forked this child (a bench parent that just replayed a
 * large log made W7 read 4.8× once). Elsewhere, maxRSS it is.
 */
function peakMeter(): { read(): number } {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    // Not Linux, or not allowed: VmHWM (or maxRSS) since the process started.
  }
  return {
    read() {
      try {
        const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
        if (m) return Number(m[1]) * 1024;
      } catch {
        // no /proc
      }
      return process.resourceUsage().maxRSS * 1024;
    },
  };
}

/** A store that counts the bytes its `read` hands out (every other method passes through). */
function countingStore(store: SpillStore): SpillStore & { bytesRead: number } {
  const counted = Object.create(store) as SpillStore & { bytesRead: number };
  counted.bytesRead = 0;
  counted.read = async (locator, range) => {
    const chunk = await store.read(locator, range);
    counted.bytesRead += chunk.nextOffset - chunk.offset;
    return chunk;
  };
  return counted;
}

async function main() {
  let createFsSpillStore: (o: { baseDir?: string }) => SpillStore & { remove(): Promise<void> };
  try {
    ({ createFsSpillStore } = (await import('../../src/adapters/spill/fsSpillStore.js')) as never);
  } catch (e) {
    console.log(JSON.stringify({ ok: false, reason: `spill policy or fs spill store not available: ${(e as Error).message}` }));
    return;
  }
  const line = 'src/some/file.ts:42: a line of grep output that goes on for a while, like real tool output does\n';
  const dump = defineTool({
    name: 'dump',
    description: 'returns a large text',
    input: z.object({ bytes: z.number() }),
    isConcurrencySafe: () => true,
    execute: ({ bytes }) => {
      const s = line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes);
      // Flatten now (a sliced/repeated string is a tree until first read), as a real body's output would be.
      void s.charCodeAt(s.length >> 1);
      return s;
    },
  });
  const baseDir = await mkdtemp(join(tmpdir(), 'dsh-bench-w7-'));
  const fsStore = createFsSpillStore({ baseDir });
  const store = countingStore(fsStore);
  const logPath = join(baseDir, 'session.jsonl');
  const { log, sink } = await openJsonlSessionLog(logPath);
  try {
    // The runtime installs the spill policy itself; it is given the filesystem store.
    const { read } = createBuiltinTools({ root: baseDir, spillStore: store });
    const rt = createRuntime({ tools: [dump, read], spillStore: store, log });
    // Warm the code paths with a small spill.
    await rt.runCall({ callId: 'warm', toolName: 'dump', input: { bytes: 256 * 1024 } }).result;
    const g = (globalThis as { gc?: () => void }).gc;
    g?.();
    g?.();
    const peak = peakMeter();
    await sink.flush();
    const logBefore = statSync(logPath).size;
    const baselineRss = process.memoryUsage().rss;
    const peakBefore = peak.read();
    const t0 = performance.now();
    const result = await rt.runCall({ callId: 'big', toolName: 'dump', input: { bytes: size } }).result;
    const ms = performance.now() - t0;
    await sink.flush();
    const peakRss = peak.read();
    const logBytes = statSync(logPath).size - logBefore;
    const spill = result.metadata.spill as { locator?: string; bytes?: number } | undefined;
    if (result.isError || !spill?.locator) throw new Error(`the output was not spilled: ${result.content.slice(0, 200)}`);
    const saved = (await stat(spill.locator)).size;
    if (saved !== size) throw new Error(`spilled ${saved} bytes, expected ${size}`);
    // Pages from the middle of the output, as a model following the retrieval hint reads them.
    const lines = (spill as { lines?: number }).lines ?? 0;
    const pageMs: number[] = [];
    let pageStoreBytes = 0;
    for (let i = 0; i < 3; i++) {
      const before = store.bytesRead;
      const p0 = performance.now();
      const page = await rt.runCall({ callId: `page-${i}`, toolName: 'read', input: { locator: spill.locator, offset: Math.floor(lines / 2) + i * 200, limit: 200 } }).result;
      pageMs.push(performance.now() - p0);
      pageStoreBytes = store.bytesRead - before;
      if (page.isError || !page.content.startsWith('src/some/file.ts:42:')) throw new Error(`the page read failed: ${page.content.slice(0, 200)}`);
    }
    pageMs.sort((a, b) => a - b);
    console.log(
      JSON.stringify({
        ok: true,
        inputBytes: size,
        baselineRss,
        peakRss,
        peakBefore,
        peakRssOverInput: (peakRss - baselineRss) / size,
        ms,
        previewChars: result.content.length,
        logBytes,
        pageReadMs: pageMs[1],
        pageStoreBytes,
      }),
    );
  } finally {
    await sink.close().catch(() => undefined);
    await fsStore.remove();
    await rm(baseDir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.log(JSON.stringify({ ok: false, reason: `W7 failed: ${e instanceof Error ? e.message : String(e)}` }));
});
