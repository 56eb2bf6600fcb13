// Registry changes from outside the pipeline (an MCP server's listChanged) land between steps:
// never under a running batch, always before the next step's model request; with no turn
// running, at once. And `rt.close()` runs every disposer once, recording failures.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';

describe('tool registry changes between steps', () => {
  it('a change queued during a batch is invisible to that batch and visible to the next step', async () => {
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
    const model = scriptedModel([{ toolCalls: [{ toolName: 'install' }, { toolName: 'probe' }] }, { toolCalls: [{ toolName: 'extra' }] }, { text: 'done' }]);
    const { outcome } = await rt.startTurn({ model, input: 'go' }).done;
    expect(outcome).toBe('completed');
    expect(seenByProbe).toEqual([['install', 'probe']]);
    expect(model.calls[0]!.options.tools?.map((t) => t.name)).toEqual(['install', 'probe']);
    expect(model.calls[1]!.options.tools?.map((t) => t.name)).toEqual(['install', 'probe', 'extra']);
    const extraResult = rt.log.events().find((e) => e.type === 'tool/result' && e.toolName === 'extra');
    expect(extraResult?.type === 'tool/result' && extraResult.result.content).toBe('extra ran');
  });

  it('with no turn running a change applies at once; one queued in the last step applies when the turn ends', async () => {
    const a = defineTool({ name: 'a', input: z.object({}), execute: () => 'a' });
    let rt!: ReturnType<typeof createRuntime>;
    const late = defineTool({ name: 'late', input: z.object({}), execute: () => (rt.tools.betweenSteps(() => rt.tools.unregister('a')), 'ok') });
    rt = createRuntime({ tools: [a, late] });
    rt.tools.betweenSteps(() => rt.tools.unregister('late'));
    expect(rt.tools.list().map((t) => t.name)).toEqual(['a']);
    rt.tools.register(late);
    await rt.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'late' }] }]), input: 'go', maxSteps: 1 }).done;
    expect(rt.tools.list().map((t) => t.name)).toEqual(['late']);
  });

  it('close() runs every disposer once, latest first, and records a failing one as a warning', async () => {
    const rt = createRuntime();
    const order: string[] = [];
    rt.onClose(() => void order.push('first'));
    rt.onClose(() => {
      throw new Error('boom');
    });
    rt.onClose(async () => void order.push('third'));
    await Promise.all([rt.close(), rt.close()]);
    await rt.close();
    expect(order).toEqual(['third', 'first']);
    const warnings = rt.log.events().filter((e) => e.type === 'warning');
    expect(warnings.map((w) => w.type === 'warning' && w.code)).toEqual(['CLOSE_FAILED']);
  });
});
