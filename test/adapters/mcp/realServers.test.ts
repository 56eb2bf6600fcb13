// A turn against the MCP project's own reference servers, run as a user would configure them
// (devDependencies, pinned): @modelcontextprotocol/server-everything and
// @modelcontextprotocol/server-filesystem 2026.8.31 over stdio. Echo, sum, an image, structured
// content and a long-running operation with progress, then more calls to the same server, all
// succeed (issue 25 item 8: the long-running operation's late progress notification used to
// close the server); the filesystem server's own refusal outside its root is a clear error result.
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { attachMcpServers } from '../../../src/adapters/mcp/index.js';
import { scriptedModel } from '../../../src/adapters/model/index.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';

vi.setConfig({ testTimeout: 120_000 });
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const serverBin = (pkg: string) => fileURLToPath(new URL(`../../../node_modules/@modelcontextprotocol/${pkg}/dist/index.js`, import.meta.url));

describe('the MCP reference servers', () => {
  it('a turn: echo, sum, image, structured content, a long-running operation with progress, more calls; the filesystem refusal is an error result', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-mcp-fs-')));
    writeFileSync(join(root, 'notes.txt'), 'inside the root\n');
    const rt = createRuntime();
    cleanups.push(() => rt.close());
    const source = await attachMcpServers(rt, {
      ev: { command: process.execPath, args: [serverBin('server-everything'), 'stdio'] },
      fs: { command: process.execPath, args: [serverBin('server-filesystem'), root] },
    });
    expect(source.skipped.filter((s) => s.tool === undefined)).toEqual([]);
    const steps = [
      [
        { toolName: 'ev__echo', input: { message: 'hello' } },
        { toolName: 'ev__get-sum', input: { a: 2, b: 40 } },
        { toolName: 'ev__get-tiny-image', input: {} },
        { toolName: 'ev__get-structured-content', input: { location: 'Chicago' } },
      ],
      [{ toolName: 'ev__trigger-long-running-operation', input: { duration: 1, steps: 3 } }],
      [
        { toolName: 'ev__echo', input: { message: 'again' } },
        { toolName: 'ev__get-sum', input: { a: 1, b: 1 } },
        { toolName: 'fs__read_text_file', input: { path: join(root, 'notes.txt') } },
        { toolName: 'fs__read_text_file', input: { path: '/etc/passwd' } },
        { toolName: 'fs__list_allowed_directories', input: {} },
      ],
    ];
    const model = scriptedModel([...steps.map((toolCalls) => ({ toolCalls })), { text: 'done' }]);
    const { outcome } = await rt.startTurn({ model, input: 'exercise the servers' }).done;
    expect(outcome).toBe('completed');

    const events = rt.log.events();
    const results = events.flatMap((e) => (e.type === 'tool/result' ? [e.result] : []));
    expect(results.map((r) => r.toolName)).toEqual(steps.flat().map((s) => s.toolName));
    const [echo, sum, image, structured, long, echo2, sum2, inside, outside, allowed] = results;
    expect(echo).toMatchObject({ isError: false, content: 'Echo: hello' });
    expect(sum?.isError).toBe(false);
    expect(sum?.content).toContain('42');
    expect(image?.isError).toBe(false);
    expect(image?.parts?.some((p) => p.type === 'image' && p.mediaType === 'image/png' && p.data.length > 0)).toBe(true);
    expect(structured?.isError).toBe(false);
    expect(structured?.value).toMatchObject({ temperature: expect.any(Number), conditions: expect.any(String) });
    expect(long?.isError).toBe(false);
    expect(long?.content).toMatch(/Long running operation completed/i);
    const progress = events.filter((e) => e.type === 'tool/progress' && e.callId === long?.callId);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(echo2).toMatchObject({ isError: false, content: 'Echo: again' });
    expect(sum2?.content).toContain('2');
    expect(inside).toMatchObject({ isError: false, content: 'inside the root\n' });
    // The server's own refusal: an error result with its reason, and the server stays up.
    expect(outside?.isError).toBe(true);
    expect(outside?.error?.code).toBe('TOOL_FAILED');
    expect(outside?.content).toContain('Access denied - path outside allowed directories');
    expect(allowed?.isError).toBe(false);
    expect(allowed?.content).toContain(root);
    for (const name of ['ev', 'fs']) expect(source.connections.get(name)?.closedReason()).toBeUndefined();

    // The long-running operation's last progress may come after its answer: a notice at most,
    // and the server still answers.
    const after = await rt.runCall({ callId: 'after', toolName: 'ev__echo', input: { message: 'still here' } }).result;
    expect(after).toMatchObject({ isError: false, content: 'Echo: still here' });
  });
});
