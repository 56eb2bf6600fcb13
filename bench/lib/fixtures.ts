/**
 * The W1 workload on both sides: a 2-step turn in which the model asks for N no-op tool calls,
 * then answers. One pre-execute listener (a synchronous allow), default concurrency (8).
 */
import type { TelemetryOptions } from '../../src/runtime/telemetry/telemetryOptions.js';
import { otelTelemetry } from '../../src/telemetry.js';
import type { InspectionEvent } from 'xstate';
import { z } from 'zod';
import { scriptedModel, type ScriptedResponse } from '../../src/adapters/model/scriptedModel.js';
import type { PreExecuteDecision } from '../../src/protocol/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { createFloorRuntime, type FloorResponse } from '../floor.js';

export const noopTool = defineTool({
  name: 'noop',
  description: 'does nothing',
  input: z.object({ i: z.number() }),
  isConcurrencySafe: () => true,
  execute: async () => 'ok',
});

const ALLOW: PreExecuteDecision = Object.freeze({ kind: 'allow' });
/** The one pre-execute listener both sides run: a policy that allows. */
export const allowPolicy = () => ALLOW;

// Usage given explicitly: the scripted model would otherwise JSON-encode the whole prompt to
// estimate tokens, a cost of the mock, not of dsh.
const usage = { inputTokens: 1, outputTokens: 1 };

/** The scripted model's responses for a turn of N calls (built once per N, reused by every turn). */
export function dshScript(n: number): ScriptedResponse[] {
  return [
    { toolCalls: Array.from({ length: n }, (_, i) => ({ toolName: 'noop', input: { i } })), usage },
    { text: 'done', usage },
  ];
}

/** One full dsh turn: a new runtime (tools, one hook, in-memory log), the turn, its end; `inspect` attaches an inspector to it. */
export async function dshTurn(script: ScriptedResponse[], inspect?: (event: InspectionEvent) => void, telemetry?: TelemetryOptions): Promise<void> {
  const rt = createRuntime({ tools: [noopTool], ...(telemetry ? { telemetry: otelTelemetry(telemetry) } : {}) });
  rt.hooks.on('tools/pre-execute', 'policy', allowPolicy);
  const turn = rt.startTurn({ model: scriptedModel(script), input: 'go', maxSteps: 4, ...(inspect ? { inspect } : {}) });
  const out = await turn.done;
  if (out.outcome !== 'completed') throw new Error(`dsh turn ended ${out.outcome}: ${out.error}`);
}

export function floorScript(n: number): FloorResponse[] {
  return [
    { toolCalls: Array.from({ length: n }, (_, i) => ({ callId: `call-1-${i}`, toolName: 'noop', input: JSON.stringify({ i }) })) },
    { text: 'done' },
  ];
}

/** One full floor turn, same shape. */
export async function floorTurn(script: FloorResponse[]): Promise<void> {
  const rt = createFloorRuntime({ tools: [noopTool] });
  rt.onPreExecute(allowPolicy);
  await rt.runTurn((i) => Promise.resolve(script[i]!), 'go', 4);
}

/**
 * The inspector W1 attaches for `inspectedRatio`: it looks at every inspection event (counts them
 * by type), the least any real inspector does. What an inspector does with the events is its own cost.
 */
export function countingInspector(): (event: InspectionEvent) => void {
  const counts = new Map<string, number>();
  return (event) => void counts.set(event.type, (counts.get(event.type) ?? 0) + 1);
}
