/**
 * The session wire protocol (row key `wire`, issue 34): a `createSessionHandler` on a real
 * `node:http` server on loopback, one in-memory session, and (1) `clients` pages following it over
 * SSE while `events` log events are appended in bursts: events per second from the first append
 * until every client holds the last one, and each event's latency from its append to each client
 * (median and p99 over every event × client); (2) `idle` connections that follow a quiet session
 * from its last `seq`:
 * the heap and external memory each one adds, after a GC. Clients run in the same process (their
 * sockets' memory counts too: an upper bound for the server's share).
 */
import { createServer } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { scriptedModel } from '../../src/adapters/model/scriptedModel.js';
import { sseFrames } from '../../src/client/sseFrames.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { createMemoryLog } from '../../src/runtime/log/sessionLog.js';
import { createSessionHandler, hostRuntime, memorySessionDirectory, toNodeListener } from '../../src/server/index.js';
import { median, nowMs } from '../lib/stats.js';

export interface WireResult {
  clients: number;
  events: number;
  /** Events per second delivered to every client (each event reaches all `clients`). */
  eventsPerSec: number;
  latencyMedianMs: number;
  latencyP99Ms: number;
  idleConnections: number;
  /** Heap + external bytes per idle connection (server and client side in one process). */
  bytesPerIdleConnection: number;
}

const gc = () => (globalThis as { gc?: () => void }).gc?.();
const memory = () => {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
};
const p = (xs: number[], q: number) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

export async function runWire(options: { quick: boolean }): Promise<{ result: WireResult }> {
  const clients = options.quick ? 20 : 100;
  const events = options.quick ? 2_000 : 10_000;
  const idle = options.quick ? 200 : 1_000;
  const log = createMemoryLog();
  const runtime = createRuntime({ log });
  const sessions = memorySessionDirectory({ host: (id) => hostRuntime({ id, runtime, turnOptions: () => ({ model: scriptedModel([]) }) }) });
  const id = await sessions.create();
  const handler = createSessionHandler({ sessions, authorize: () => true, heartbeatMs: 0, maxBufferedBytes: 8 * 1024 * 1024 });
  const server = createServer(toNodeListener(handler));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/sessions/${id}/events`;

  // (1) Throughput and latency: every client records when each seq reached it.
  const appendedAt: number[] = [];
  const received = Array.from({ length: clients }, () => new Float64Array(events + 1));
  const aborts: AbortController[] = [];
  let remaining = clients;
  let allDone!: () => void;
  const done = new Promise<void>((resolve) => (allDone = resolve));
  const readers = Array.from({ length: clients }, async (_, c) => {
    const abort = new AbortController();
    aborts.push(abort);
    const r = await fetch(url, { signal: abort.signal });
    try {
      for await (const f of sseFrames(r.body!)) {
        if (f.event !== 'log' || f.id === undefined) continue;
        const seq = Number(f.id);
        received[c]![seq] = nowMs();
        if (seq === events) {
          if (--remaining === 0) allDone();
          break;
        }
      }
    } catch {
      // aborted at the end
    }
  });
  while (handler.connections() < clients) await new Promise((r) => setTimeout(r, 5));
  const t0 = nowMs();
  for (let i = 1; i <= events; i++) {
    appendedAt[i] = nowMs();
    log.append({ type: 'warning', code: 'BENCH', message: `event ${i}` });
    // Bursts of 100, then the event loop turns (as appends come from a running turn).
    if (i % 100 === 0) await new Promise((r) => setImmediate(r));
  }
  await done;
  const wallMs = nowMs() - t0;
  for (const a of aborts) a.abort();
  await Promise.allSettled(readers);
  const latencies: number[] = [];
  for (const row of received) for (let s = 1; s <= events; s += 7) latencies.push(row[s]! - appendedAt[s]!);

  // (2) Idle connections: a quiet session followed by `idle` raw sockets that read nothing.
  const before = memory();
  const sockets: Socket[] = [];
  const { port } = new URL(url);
  for (let i = 0; i < idle; i++) {
    const s = connect(Number(port), '127.0.0.1');
    s.on('error', () => undefined);
    // Up to date (as a page that has everything so far): idle, nothing to send.
    s.write(`GET ${new URL(url).pathname} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nLast-Event-ID: ${log.lastSeq}\r\n\r\n`);
    sockets.push(s);
  }
  while (handler.connections() < idle) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 50));
  const after = memory();
  for (const s of sockets) s.destroy();
  handler.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));

  return {
    result: {
      clients,
      events,
      eventsPerSec: (events / wallMs) * 1000,
      latencyMedianMs: median(latencies),
      latencyP99Ms: p(latencies, 0.99),
      idleConnections: idle,
      bytesPerIdleConnection: (after - before) / idle,
    },
  };
}
