/**
 * `dsh mcp list`: connects to the configured MCP servers and prints, per server, the tools dsh
 * would offer the model (namespaced `server__tool`, parallel or exclusive) and everything skipped
 * with the reason. The servers map comes from the caller (the config loader wires it in: a
 * project's server not trusted yet is left out with a line).
 * `dsh mcp trust`: remembers the exact commands of the project config's MCP servers as trusted
 * (outside the workspace), printing each; the caller wires in what it does.
 */
import type { Command } from '../command.js';
import { UsageError } from '../command.js';
import type { McpServers } from '../../adapters/mcp/serverConfig.js';

const firstLine = (s: string) => s.split('\n', 1)[0]!.slice(0, 100);

/** The `mcp` command over a servers map (or a loader of one, read when the command runs). */
export function mcpCommand(servers: McpServers | (() => McpServers | Promise<McpServers>), options: { trust?: () => Promise<readonly string[]> } = {}): Command {
  const command: Command = {
    name: 'mcp',
    summary: 'list the tools of the configured MCP servers; trust the project\'s servers',
    synopsis: 'dsh mcp list | dsh mcp trust',
    details: `list: connects to every server of "mcpServers" (each within its start-up limit), prints the
tools dsh offers from it as server__tool with their execution mode (parallel only when the
configuration trusts it), and every server or tool skipped with the reason. Then closes them.
A server the project's dsh.config.json names starts only once trusted (not the user file's).

trust: remembers the exact command of every MCP server the project's dsh.config.json names
(printed, one line each) in $XDG_CONFIG_HOME/dsh/trusted-mcp-servers.json, so dsh run and dsh mcp
list start them. Any change to the config file needs dsh mcp trust again.

  -h, --help   this text

Exit: 0 every server listed (trust: done), 1 a server or tool was skipped, 2 bad usage.`,
    options: {},
    positionals: { min: 1, max: 1, name: 'list|trust' },
    async run({ positionals }, io) {
      if (positionals[0] === 'trust' && options.trust) {
        const lines = await options.trust();
        if (lines.length === 0) io.out('no MCP servers in the project config to trust');
        for (const l of lines) io.out(l);
        return 0;
      }
      if (positionals[0] !== 'list') throw new UsageError(`unknown mcp subcommand ${JSON.stringify(positionals[0])}; expected ${options.trust ? '"list" or "trust"' : '"list"'}`, command);
      const { createMcpToolSource } = await import('../../adapters/mcp/toolSource.js');
      const map = typeof servers === 'function' ? await servers() : servers;
      const source = await createMcpToolSource(map, { workspaceRoot: process.cwd() });
      try {
        const names = Object.keys(map);
        if (names.length === 0) io.out('no MCP servers configured ("mcpServers" is empty)');
        for (const server of names) {
          const down = source.skipped.find((s) => s.server === server && s.tool === undefined);
          if (down) {
            io.out(`${server}: skipped: ${down.reason}`);
            continue;
          }
          const tools = source.toolsOf(server);
          io.out(`${server}: ${tools.length} tool(s)`);
          for (const t of tools) {
            let safe = false;
            try {
              safe = t.isConcurrencySafe({}) === true;
            } catch {
              safe = false;
            }
            io.out(`  ${t.name}  [${safe ? 'parallel' : 'exclusive'}]${t.description ? `  ${firstLine(t.description)}` : ''}`);
          }
          for (const s of source.skipped.filter((x) => x.server === server && x.tool !== undefined)) io.out(`  ${s.tool}: skipped: ${s.reason}`);
        }
        return source.skipped.length === 0 ? 0 : 1;
      } finally {
        await source.close();
      }
    },
  };
  return command;
}
