/**
 * W7, run in a child process of its own so its peak RSS is its own: one tool call whose body
 * returns a 100 MiB text, through the `spill` post-execute policy and the filesystem spill store.
 * Prints one JSON line: { ok, inputBytes, baselineRss, peakRss, peakRssOverInput, ms } or { ok: false, reason }.
 *
 * peakRssOverInput = (peak RSS − RSS just before the call) / input size. The output is created
 * inside the call, so 1.0 would mean the pipeline held the output once and copied nothing.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';

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

async function main() {
  let createFsSpillStore: (o: { baseDir?: string }) => { remove(): Promise<void> };
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
  const store = createFsSpillStore({ baseDir });
  try {
    // The runtime installs the spill policy itself; it is given the filesystem store.
    const rt = createRuntime({ tools: [dump], spillStore: store as never });
    // Warm the code paths with a small spill.
    await rt.runCall({ callId: 'warm', toolName: 'dump', input: { bytes: 256 * 1024 } }).result;
    const g = (globalThis as { gc?: () => void }).gc;
    g?.();
    g?.();
    const peak = peakMeter();
    const baselineRss = process.memoryUsage().rss;
    const peakBefore = peak.read();
    const t0 = performance.now();
    const result = await rt.runCall({ callId: 'big', toolName: 'dump', input: { bytes: size } }).result;
    const ms = performance.now() - t0;
    const peakRss = peak.read();
    const spill = result.metadata.spill as { locator?: string; bytes?: number } | undefined;
    if (result.isError || !spill?.locator) throw new Error(`the output was not spilled: ${result.content.slice(0, 200)}`);
    const saved = (await stat(spill.locator)).size;
    if (saved !== size) throw new Error(`spilled ${saved} bytes, expected ${size}`);
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
      }),
    );
  } finally {
    await store.remove();
    await rm(baseDir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.log(JSON.stringify({ ok: false, reason: `W7 failed: ${e instanceof Error ? e.message : String(e)}` }));
});
