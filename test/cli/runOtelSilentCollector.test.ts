/**
 * Issue 31 item 9: `dsh run --otel` against a collector that accepts every connection and never
 * answers. The export requests are themselves bounded (the exporters abort them at dsh's close
 * deadline), so the run ends on its own, having said in one line on stderr that nothing was
 * exported; and a collector that refuses (HTTP 500) gets the same one line, naming the failure.
 * What is pinned: the line, the exit code, and that the client (dsh) is the side that gave up on
 * each request the silent collector held.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startDsh, testEnv } from './spawnDsh.js';

const dirs: string[] = [];
const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function collector(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; held: number; abortedByClient: () => number }> {
  let held = 0;
  let aborted = 0;
  const server = createServer((req, res) => {
    held++;
    req.resume();
    res.on('close', () => {
      if (!res.writableEnded) aborted++;
    });
    answer(req, res);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get held() {
      return held;
    },
    abortedByClient: () => aborted,
  };
}

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-otel-silent-'));
  dirs.push(dir);
  mkdirSync(join(dir, '.git'));
  return dir;
}

const otelEnv = (url: string) => {
  const env = testEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: url, XDG_CONFIG_HOME: join(workspace(), 'xdg') });
  for (const k of Object.keys(env)) if (k.startsWith('OTEL_') && k !== 'OTEL_EXPORTER_OTLP_ENDPOINT') delete env[k];
  return env;
};

describe('dsh run --otel when the collector does not answer', () => {
  it('a collector that never answers: the run ends on its own, says so in one line, and dsh gave up on the requests', async () => {
    const rx = await collector(() => {
      // accepted, never answered
    });
    const run = await startDsh(workspace(), ['run', '--otel', '--model', 'embedded', 'look around'], otelEnv(rx.url)).done;
    expect(run.code, run.err).toBe(0);
    const lines = run.err.split('\n').filter((l) => l.includes('otel'));
    expect(lines).toEqual([expect.stringMatching(/^dsh: otel: (the collector did not answer within 5 s: spans and metrics not exported|span export failed: .*|metric export failed: .*)$/)]);
    expect(rx.held).toBeGreaterThan(0);
    expect(rx.abortedByClient()).toBe(rx.held);
  }, 120_000);

  it('a collector that refuses (HTTP 500): one line naming the failure, exit code unchanged', async () => {
    const rx = await collector((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('collector is broken');
    });
    const run = await startDsh(workspace(), ['run', '--otel', '--model', 'embedded', 'look around'], otelEnv(rx.url)).done;
    expect(run.code, run.err).toBe(0);
    const lines = run.err.split('\n').filter((l) => l.includes('otel'));
    expect(lines).toEqual([expect.stringMatching(/^dsh: otel: (span|metric) export failed: /)]);
  }, 120_000);
});
