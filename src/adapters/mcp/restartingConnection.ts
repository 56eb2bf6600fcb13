/**
 * A connection that is started again after the server sent a message over its limit (issue 31
 * item 9): that call failed at once and the stream was closed (boundedStdio.ts); the next call
 * starts the server afresh and goes on, at most `maxRestarts` times per connection. Any other end
 * (the process exited, bytes that are not JSON-RPC, `close()`) is final, as before: later calls
 * fail fast. Listeners (`onToolsChanged`, `onNotice`) follow each new connection.
 */
import { ErrorCode } from '../../protocol/index.js';
import { ToolError } from '../../runtime/toolError.js';
import type { McpConnection } from './connect.js';

/** How many times one server is started again after an over-limit message. */
export const MAX_RESTARTS = 3;

export function restartingConnection(first: McpConnection, reconnect: () => Promise<McpConnection>, maxRestarts = MAX_RESTARTS): McpConnection {
  let current = first;
  let restarts = 0;
  let closed = false;
  let starting: Promise<McpConnection> | undefined;
  const toolsChanged: Array<() => void> = [];
  const noticeListeners: Array<(message: string) => void> = [];

  const live = async (): Promise<McpConnection> => {
    if (closed || !current.closedReason() || current.restartable?.() !== true || restarts >= maxRestarts) return current;
    starting ??= (async () => {
      restarts++;
      try {
        const next = await reconnect();
        if (closed) {
          await next.close();
          return current;
        }
        for (const l of toolsChanged) next.onToolsChanged(l);
        for (const l of noticeListeners) next.onNotice(l);
        current = next;
        return next;
      } finally {
        starting = undefined;
      }
    })();
    try {
      return await starting;
    } catch (e) {
      throw new ToolError(ErrorCode.TOOL_FAILED, `MCP server "${first.name}" could not be started again after ${current.closedReason()}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };

  return {
    name: first.name,
    config: first.config,
    closedReason: () => current.closedReason(),
    listTools: async () => (await live()).listTools(),
    callTool: async (tool, args, options) => (await live()).callTool(tool, args, options),
    outputSchemaRefused: (tool) => current.outputSchemaRefused(tool),
    onToolsChanged: (l) => {
      toolsChanged.push(l);
      current.onToolsChanged(l);
    },
    onNotice: (l) => {
      noticeListeners.push(l);
      current.onNotice(l);
    },
    noticeCount: () => current.noticeCount(),
    restartable: () => !closed && current.restartable?.() === true && restarts < maxRestarts,
    close: async () => {
      closed = true;
      await starting?.catch(() => undefined);
      await current.close();
    },
  };
}
