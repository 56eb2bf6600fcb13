/**
 * W4 memory: heap growth per turn over many turns of N = 8 in one long-lived runtime (after a
 * full GC), and the heap one idle session holds.
 *
 * The session log's own growth is by design (it is the source of truth), so for the growth figure
 * the runtime gets a log that starts empty for each turn: what is left is what the runtime, the
 * machines and XState keep per turn (ids, caches, listeners), the leaks this workload is for.
 */
import { scriptedModel } from '../../src/adapters/model/scriptedModel.js';
import type { LogEvent, NewLogEvent } from '../../src/protocol/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { SessionIndex } from '../../src/runtime/log/sessionIndex.js';
import { createMemoryLog, type SessionLog } from '../../src/runtime/log/sessionLog.js';
import { allowPolicy, dshScript, floorScript, floorTurn, noopTool } from '../lib/fixtures.js';
import { collect } from '../lib/stats.js';

/**
 * A SessionLog whose contents can be dropped between turns, with its session index (the prompt
 * projection and open work kept as events arrive, src/runtime/log/sessionIndex.ts): the index is
 * a view of the log and grows with it by design, so it is dropped with the log.
 */
function resettableLog(): SessionLog & { reset(): void } {
  let inner = createMemoryLog();
  let index = new SessionIndex();
  const listeners = new Set<(e: LogEvent) => void>();
  const log: SessionLog & { reset(): void } = {
    append<E extends NewLogEvent>(event: E) {
      const stamped = inner.append(event);
      index.apply(stamped as unknown as LogEvent);
      for (const l of listeners) l(stamped as unknown as LogEvent);
      return stamped;
    },
    events: (range) => inner.events(range),
    get: (seq) => inner.get(seq),
    get lastSeq() {
      return inner.lastSeq;
    },
    subscribe(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    get index() {
      return index;
    },
    reset() {
      inner = createMemoryLog();
      index = new SessionIndex();
    },
  };
  return log;
}

const heap = () => {
  collect();
  return process.memoryUsage().heapUsed;
};

export interface W4Result {
  growthBytesPerTurn: number;
  idleSessionBytes: number;
}

export interface W4Detail {
  turns: number;
  floorGrowthBytesPerTurn: number;
  /** A runtime with its tools and hook, before any turn. */
  freshSessionBytes: number;
  /** What one finished N = 8 turn adds to a session (its log, mostly; part of idleSessionBytes). */
  turnBytes: number;
}

export async function runW4(opts: { quick: boolean; log: (s: string) => void }): Promise<{ result: W4Result; detail: W4Detail }> {
  const turns = opts.quick ? 1_500 : 20_000;
  // JIT code, inline caches and XState's per-event-type memo settle over the first ~3,000 turns.
  const warmup = opts.quick ? 1_500 : 3_000;
  const script = dshScript(8);

  // Growth: one runtime, many turns.
  const log = resettableLog();
  const rt = createRuntime({ tools: [noopTool], log });
  rt.hooks.on('tools/pre-execute', 'policy', allowPolicy);
  const turn = async () => {
    log.reset();
    const out = await rt.startTurn({ model: scriptedModel(script), input: 'go', maxSteps: 4 }).done;
    if (out.outcome !== 'completed') throw new Error(`turn ended ${out.outcome}`);
  };
  for (let i = 0; i < warmup; i++) await turn();
  log.reset();
  const h0 = heap();
  for (let i = 0; i < turns; i++) {
    await turn();
    if ((i + 1) % 5000 === 0) opts.log(`  w4 ${i + 1}/${turns} turns`);
  }
  log.reset();
  const h1 = heap();

  // The floor, same count, for reference.
  const fs = floorScript(8);
  for (let i = 0; i < warmup; i++) await floorTurn(fs);
  const f0 = heap();
  for (let i = 0; i < turns; i++) await floorTurn(fs);
  const f1 = heap();

  // Idle sessions: many, kept alive, so per-session bytes rise above GC noise.
  const sessions = opts.quick ? 100 : 300;
  const keep: unknown[] = [];
  const s0 = heap();
  for (let i = 0; i < sessions; i++) {
    const r = createRuntime({ tools: [noopTool] });
    r.hooks.on('tools/pre-execute', 'policy', allowPolicy);
    keep.push(r);
  }
  const s1 = heap();
  for (const r of keep as ReturnType<typeof createRuntime>[]) {
    await r.startTurn({ model: scriptedModel(script), input: 'go', maxSteps: 4 }).done;
  }
  const s2 = heap();
  keep.length = 0;

  return {
    result: { growthBytesPerTurn: (h1 - h0) / turns, idleSessionBytes: (s2 - s0) / sessions },
    detail: {
      turns,
      floorGrowthBytesPerTurn: (f1 - f0) / turns,
      freshSessionBytes: (s1 - s0) / sessions,
      turnBytes: (s2 - s1) / sessions,
    },
  };
}
