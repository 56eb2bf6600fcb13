// The README's first example, verbatim in behaviour: if this fails, the README is lying.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineTool } from '../src/index.js';
import { scriptedModel } from '../src/testing/index.js';

describe('README examples', () => {
  it('one tool, one hook, one call', async () => {
    const read = defineTool({
      name: 'read',
      description: 'Read a file',
      input: z.object({ path: z.string() }),
      isConcurrencySafe: () => true,
      execute: async ({ path }) => `contents of ${path}`,
    });
    const rt = createRuntime({ tools: [read] });
    rt.hooks.on('tools/pre-execute', 'sandbox', (call, next) =>
      (call.args as { path: string }).path.startsWith('/') ? { kind: 'deny', reason: 'absolute paths are off limits' } : next(),
    );
    const result = await rt.runCall({ callId: 'c1', toolName: 'read', input: '{"path":"/etc/passwd"}' }).result;
    expect(result.isError).toBe(true);
    expect(result.error?.code).toBe('POLICY_DENIED');
    expect(result.content).toContain('absolute paths are off limits');
    expect(rt.log.events().map((e) => e.type)).toEqual(['tool/call', 'tool/result']);

    const model = scriptedModel([{ toolCalls: [{ toolName: 'read', input: { path: 'a.txt' } }] }, { text: 'Done.' }]);
    const turn = rt.startTurn({ model, input: 'read a.txt' });
    const seen = new Set<string>();
    turn.actor.subscribe((s) => seen.add(JSON.stringify(s.value)));
    const { outcome } = await turn.done;
    expect(outcome).toBe('completed');
    expect(seen.has('"stepping"')).toBe(true);
  });
});
