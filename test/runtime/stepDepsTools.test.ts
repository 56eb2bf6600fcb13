// The step deps' `tools` (read at each model request, applying registry changes queued between
// steps) is a getter on a prototype, not an own property: an inspector that serialises snapshots
// (their contexts hold the step deps), as a devtools bridge does, must not read it and so apply a
// change queued during a batch under that batch.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';

/** JSON of any value, cycles and all (what an inspector sending snapshots elsewhere does). */
function serialise(value: unknown): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'object' && v !== null) {
      if (seen.has(v)) return '[cycle]';
      seen.add(v);
    }
    return typeof v === 'bigint' ? String(v) : v;
  });
}

describe('step deps and inspectors', () => {
  it('serialising every snapshot does not apply a registry change queued during the batch', async () => {
    const extra = defineTool({ name: 'extra', input: z.object({}), execute: () => 'extra ran' });
    let rt!: ReturnType<typeof createRuntime>;
    const seenByProbe: string[][] = [];
    const install = defineTool({
      name: 'install',
      input: z.object({}),
      execute: () => {
        rt.tools.betweenSteps(() => rt.tools.register(extra));
        return 'queued';
      },
    });
    const probe = defineTool({ name: 'probe', input: z.object({}), execute: () => (seenByProbe.push(rt.tools.list().map((t) => t.name)), 'probed') });
    rt = createRuntime({ tools: [install, probe] });
    const model = scriptedModel([{ toolCalls: [{ toolName: 'install' }, { toolName: 'probe' }] }, { text: 'done' }]);
    let serialised = 0;
    const inspect = (ev: { type: string; snapshot?: unknown }) => {
      if (ev.type !== '@xstate.snapshot') return;
      serialise(ev.snapshot);
      serialised++;
    };
    const { outcome } = await rt.startTurn({ model, input: 'go', inspect }).done;
    expect(outcome).toBe('completed');
    expect(serialised).toBeGreaterThan(0);
    expect(seenByProbe).toEqual([['install', 'probe']]);
    expect(model.calls[1]!.options.tools?.map((t) => t.name)).toEqual(['install', 'probe', 'extra']);
  });
});
