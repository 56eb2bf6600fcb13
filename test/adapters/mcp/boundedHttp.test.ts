// A hostile Streamable HTTP MCP server (fixtures/hostileHttpServer.mjs, a real node:http server on
// loopback) against dsh's MCP client: what it sends is bounded as stdio is (an SSE line or event,
// a JSON answer, one answer stream in all), a cancelled or timed-out call aborts its answer
// stream, a stream cut or ended without the answer fails its call at once, and after each of
// these the next call on the same connection works. Issue 24 item 3.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { attachMcpServers, boundHttpAnswers, type McpHttpServerConfig } from '../../../src/adapters/mcp/index.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { timeout } from '../../../src/runtime/wrappers/timeout.js';
import { eventually, HOSTILE_HTTP, recordFile, startHttpFixture } from './fixtures/fixtureProcess.js';

vi.setConfig({ testTimeout: 180_000 });
const MB = 1024 * 1024;

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function hostile() {
  const record = recordFile();
  const server = await startHttpFixture(record.path, {}, HOSTILE_HTTP);
  cleanups.push(server.stop);
  return { record, url: server.url };
}

async function runtimeWith(config: McpHttpServerConfig) {
  const rt = createRuntime();
  const source = await attachMcpServers(rt, { h: config });
  cleanups.push(() => rt.close());
  return { rt, source };
}
let n = 0;
const call = (rt: ReturnType<typeof createRuntime>, tool: string) => rt.runCall({ callId: `b${++n}`, toolName: `h__${tool}`, input: { text: tool } });

describe('a hostile Streamable HTTP server', () => {
  it('a 300 MB line that never ends, a 100 MB event and a 100 MB JSON answer: each call fails naming the limit, the next works, the client grows < 100 MB', async () => {
    const { url } = await hostile();
    // The client runs alone in a child process, so only its own memory is measured.
    const client = fileURLToPath(new URL('./fixtures/boundedClient.ts', import.meta.url));
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--import', 'tsx', client, url, 'endlessLine', 'hugeEvent', 'hugeJson'], { timeout: 170_000, maxBuffer: MB }, (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    const report = JSON.parse(out.trim().split('\n').at(-1)!) as { baselineRss: number; peakRss: number; results: Array<{ tool: string; ok: boolean; code?: string; message?: string; text?: string }> };
    const byTool = report.results;
    expect(byTool.map((r) => [r.tool, r.ok])).toEqual([
      ['echo', true],
      ['endlessLine', false],
      ['hugeEvent', false],
      ['hugeJson', false],
      ['echo', true],
    ]);
    expect(byTool[1]).toMatchObject({ code: 'TOOL_FAILED', message: expect.stringContaining('an SSE line over the 10485760-byte limit that does not end') });
    expect(byTool[2]).toMatchObject({ code: 'TOOL_FAILED', message: expect.stringContaining('an SSE event over the 10485760-byte limit') });
    expect(byTool[3]).toMatchObject({ code: 'TOOL_FAILED', message: expect.stringContaining('over the 10485760-byte limit (maxMessageBytes)') });
    expect(byTool[4]?.text).toBe('echo: echo');
    const growth = report.peakRss - report.baselineRss;
    console.log(`hostile HTTP MCP server: the client's peak RSS grew ${(growth / MB).toFixed(1)} MB (baseline ${(report.baselineRss / MB).toFixed(0)} MB)`);
    expect(growth).toBeLessThan(100 * MB);
  });

  it('an answer stream cut mid-answer fails the call at once (not at the call limit); the next call works', async () => {
    const { url } = await hostile();
    const { rt, source } = await runtimeWith({ url, callTimeoutMs: 600_000 });
    const r = await call(rt, 'cut').result;
    expect(r.error?.code).toBe('TOOL_FAILED');
    expect(r.error?.message).toContain("the server's answer stream was cut before the answer");
    expect((await call(rt, 'echo').result).content).toBe('echo: echo');
    expect(source.connections.get('h')?.closedReason()).toBeUndefined();
  });

  it('an answer stream that ends without the answer fails the call at once; the next call works', async () => {
    const { url } = await hostile();
    const { rt } = await runtimeWith({ url, callTimeoutMs: 600_000 });
    const r = await call(rt, 'ended').result;
    expect(r.error?.code).toBe('TOOL_FAILED');
    expect(r.error?.message).toContain("the server's answer stream ended without the answer");
    expect((await call(rt, 'echo').result).content).toBe('echo: echo');
  });

  it('an answer stream of small events without end stops at maxResponseBytes', async () => {
    const { url } = await hostile();
    const { rt } = await runtimeWith({ url, maxResponseBytes: 2 * MB });
    const r = await call(rt, 'flood').result;
    expect(r.error?.code).toBe('TOOL_FAILED');
    expect(r.error?.message).toContain('an answer stream over the 2097152-byte limit (maxResponseBytes)');
    expect((await call(rt, 'echo').result).content).toBe('echo: echo');
  });

  it('maxMessageBytes is the event limit', async () => {
    const { url } = await hostile();
    const { rt } = await runtimeWith({ url, maxMessageBytes: MB });
    const r = await call(rt, 'hugeEvent').result;
    expect(r.error?.message).toContain('an SSE event over the 1048576-byte limit');
  });

  const abortsItsStream: Array<[string, (rt: ReturnType<typeof createRuntime>) => Promise<string | undefined>, Partial<McpHttpServerConfig>]> = [
    [
      'a cancel',
      async (rt) => {
        const h = call(rt, 'hang');
        await new Promise((r) => setTimeout(r, 300));
        h.cancel('user pressed stop');
        return (await h.result).error?.code;
      },
      {},
    ],
    [
      "the pipeline's timeout",
      async (rt) => {
        rt.hooks.on('tools/execute', 'timeout', timeout({ ms: (c) => (c.toolName === 'h__hang' ? 300 : undefined) }));
        return (await call(rt, 'hang').result).error?.code;
      },
      {},
    ],
    ["the server's call limit", async (rt) => (await call(rt, 'hang').result).error?.code, { callTimeoutMs: 300 }],
  ];
  it.each(abortsItsStream)('%s aborts the answer stream (the server sees it closed); the next call works', async (_, settle, extra) => {
    const { url, record } = await hostile();
    const { rt } = await runtimeWith({ url, ...extra });
    const code = await settle(rt);
    expect(['ABORTED', 'TIMEOUT']).toContain(code);
    await eventually(() => record.entries().some((e) => e.event === 'answer-stream-closed' && e.tool === 'hang'), 'the server to see the answer stream closed');
    await eventually(() => record.entries().some((e) => e.event === 'cancelled'), 'the server to get notifications/cancelled');
    expect((await call(rt, 'echo').result).content).toBe('echo: echo');
  });
});

describe('boundHttpAnswers framing', () => {
  const encoder = new TextEncoder();
  async function through(chunks: Uint8Array[], max: number): Promise<string> {
    const bounded = boundHttpAnswers({ maxMessageBytes: max, maxResponseBytes: 1e9 }, async () => {
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          for (const ch of chunks) c.enqueue(ch);
          c.close();
        },
      });
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    });
    const response = await bounded.fetch('http://x/mcp', { method: 'GET' });
    return await response.text();
  }
  const split = (bytes: Uint8Array, cuts: number[]) => {
    const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
    const out: Uint8Array[] = [];
    let prev = 0;
    for (const c of [...at, bytes.length]) {
      out.push(bytes.subarray(prev, c));
      prev = c;
    }
    return out;
  };

  it('hands on every whole event unchanged, however the bytes are chunked (LF, CRLF, CR, ids, comments)', async () => {
    const line = fc.stringMatching(/^[a-z0-9 :{}"]{0,20}$/);
    const eol = fc.constantFrom('\n', '\r\n', '\r');
    const field = fc.tuple(fc.constantFrom('data: ', 'id: ', 'event: ', ': ', 'retry: '), line).map(([f, v]) => f + v);
    // One line ending per event (a CR then an LF would be one CRLF, not a blank line).
    const event = fc.tuple(fc.array(field, { minLength: 1, maxLength: 4 }), eol).map(([fs, e]) => fs.map((f) => f + e).join('') + e);
    await fc.assert(
      fc.asyncProperty(fc.array(event, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(400), { maxLength: 8 }), async (events, cuts) => {
        const text = events.join('');
        const out = await through(split(encoder.encode(text), cuts), 10_000);
        expect(out).toBe(text);
      }),
      { numRuns: 200 },
    );
  });

  it('drops an unfinished event at the end and one over the limit, never handing on a partial one', async () => {
    expect(await through([encoder.encode('data: a\n\ndata: half')], 100)).toBe('data: a\n\n');
    await expect(through([encoder.encode('data: a\n\n'), encoder.encode(`data: ${'x'.repeat(200)}`)], 100)).rejects.toThrow();
  });
});
