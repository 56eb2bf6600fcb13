// The `mcpServers` entries users copy from other agents' configs, and what dsh refuses.
import { describe, expect, it } from 'vitest';
import { isTrustedConcurrencySafe, namespacedToolName, parseMcpServers } from '../../../src/adapters/mcp/index.js';

describe('mcpServers configuration', () => {
  it('accepts the shapes other agents use (extra keys ignored)', () => {
    const parsed = parseMcpServers({
      files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'], env: { DEBUG: '1' } },
      remote: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer x' } },
      claude: { type: 'stdio', command: 'srv', timeout: 5 },
    });
    expect(Object.keys(parsed)).toEqual(['files', 'remote', 'claude']);
  });

  it('refuses names that could collide, non-http URLs and entries with neither command nor url', () => {
    expect(() => parseMcpServers({ a__b: { command: 'x' } })).toThrow(/server name/);
    expect(() => parseMcpServers({ _a: { command: 'x' } })).toThrow(/server name/);
    expect(() => parseMcpServers({ a: { url: 'file:///etc/passwd' } })).toThrow(/invalid "mcpServers"/);
    expect(() => parseMcpServers({ a: { args: ['x'] } })).toThrow(/invalid "mcpServers"/);
  });

  it('names are server__tool with disallowed characters replaced; trust comes only from config', () => {
    expect(namespacedToolName('gh', 'search issues/v2')).toBe('gh__search_issues_v2');
    const cfg = { command: 'x' };
    expect(isTrustedConcurrencySafe(cfg, 'read', { readOnlyHint: true })).toBe(false);
    expect(isTrustedConcurrencySafe({ ...cfg, trustReadOnlyHint: true }, 'read', { readOnlyHint: true })).toBe(true);
    expect(isTrustedConcurrencySafe({ ...cfg, trustReadOnlyHint: true }, 'read', { readOnlyHint: 'yes' })).toBe(false);
    expect(isTrustedConcurrencySafe({ ...cfg, concurrencySafe: ['read'] }, 'read', undefined)).toBe(true);
    expect(isTrustedConcurrencySafe({ ...cfg, concurrencySafe: ['read'] }, 'write', undefined)).toBe(false);
  });

  it('size limits: maxMessageBytes for both transports, maxResponseBytes for HTTP; positive integers only', () => {
    const parsed = parseMcpServers({ s: { command: 'x', maxMessageBytes: 1024 }, h: { url: 'http://127.0.0.1:1/mcp', maxMessageBytes: 2048, maxResponseBytes: 4096 } });
    expect(parsed.s).toMatchObject({ maxMessageBytes: 1024 });
    expect(parsed.h).toMatchObject({ maxMessageBytes: 2048, maxResponseBytes: 4096 });
    expect(() => parseMcpServers({ s: { command: 'x', maxMessageBytes: 0 } })).toThrow(/invalid "mcpServers"/);
    expect(() => parseMcpServers({ h: { url: 'http://127.0.0.1:1/mcp', maxResponseBytes: 1.5 } })).toThrow(/invalid "mcpServers"/);
  });
});
