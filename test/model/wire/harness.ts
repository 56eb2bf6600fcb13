/** A runtime with two tools, driven by a real provider package against a loopback server. */
import { z } from 'zod';
import type { LogEvent, LogEventOf } from '../../../src/protocol/index.js';
import { createRuntime, type RuntimeOptions } from '../../../src/runtime/createRuntime.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { createRequestRetryPolicy } from '../../../src/runtime/requestErrors.js';

export function wireRuntime(extra: Partial<RuntimeOptions> & { onStart?: (path: string) => void } = {}) {
  const started: string[] = [];
  const read = defineTool({
    name: 'read',
    description: 'read a file',
    input: z.object({ path: z.string() }),
    isConcurrencySafe: () => true,
    execute: async (a) => {
      started.push(a.path);
      extra.onStart?.(a.path);
      // Later calls finish first: commit order must still be the model's order.
      await new Promise((r) => setTimeout(r, a.path === 'a.txt' ? 30 : 0));
      return a.path === 'big.txt' ? 'x'.repeat(20_000) : `contents of ${a.path}`;
    },
  });
  const { onStart: _ignored, ...options } = extra;
  const rt = createRuntime({
    tools: [read],
    spillStore: false,
    retryPolicy: createRequestRetryPolicy({ baseDelayMs: 0 }),
    ...options,
  });
  return { rt, started };
}

export const ofType = <T extends LogEvent['type']>(events: readonly LogEvent[], type: T) => events.filter((e): e is LogEventOf<T> => e.type === type);
