// `dsh mcp list` over a servers map: what a user sees of their MCP servers.
import { describe, expect, it, vi } from 'vitest';
import { mcpCommand } from '../../src/cli/commands/mcp.js';
import { UsageError } from '../../src/cli/command.js';
import { recordFile, stdioConfig } from '../adapters/mcp/fixtures/fixtureProcess.js';

vi.setConfig({ testTimeout: 90_000 });

const noExit = (code: number): never => {
  throw new Error(`exit ${code}`);
};

describe('dsh mcp list', () => {
  it('prints each server with its namespaced tools and modes, and skipped servers with the reason (exit 1)', async () => {
    const out: string[] = [];
    const io = { out: (l: string) => void out.push(l), err: (l: string) => void out.push(`ERR ${l}`), exit: noExit };
    const record = recordFile();
    const code = await mcpCommand({ fx: stdioConfig(record.path, { trustReadOnlyHint: true }), gone: { command: '/nonexistent/server' } }).run({ values: {}, positionals: ['list'] }, io);
    expect(code).toBe(1);
    expect(out).toContain('fx: 13 tool(s)');
    expect(out).toContain('  fx__fast  [exclusive]  Echoes its text at once.');
    expect(out).toContain('  fx__peek  [parallel]  Claims to be read-only.');
    expect(out.find((l) => l.startsWith('gone: skipped: failed to start'))).toBeDefined();
  });

  it('an empty map lists nothing (exit 0); another subcommand is a usage error', async () => {
    const out: string[] = [];
    const io = { out: (l: string) => void out.push(l), err: () => {}, exit: noExit };
    expect(await mcpCommand(() => ({})).run({ values: {}, positionals: ['list'] }, io)).toBe(0);
    expect(out).toEqual(['no MCP servers configured ("mcpServers" is empty)']);
    await expect(mcpCommand({}).run({ values: {}, positionals: ['add'] }, io)).rejects.toBeInstanceOf(UsageError);
  });
});
