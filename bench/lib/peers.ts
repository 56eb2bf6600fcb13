/**
 * The W1 turn run by two framework peers, for the side-by-side row of `npm run bench` (issue 33
 * item 7): the AI SDK's `streamText` and `@openai/agents-core`'s `Runner`, each with the same
 * shape as dsh's W1 turn (dsh's side is `dshTurn` in fixtures.ts): a 2-step turn in which the
 * model asks for N no-op calls of one tool, then answers "done"; one per-call policy that allows
 * (each peer's own approval predicate, `needsApproval`, the closest thing it has to a pre-execute
 * listener); nothing persisted.
 * - The AI SDK reads the very same scripted model dsh reads (`scriptedModel` is a LanguageModelV3).
 * - agents-core has its own model interface: a model that returns the same two responses, built
 *   once per N like dsh's script. Its tracing is off (dsh's W1 runs without telemetry too).
 */
import { Agent, Runner, Usage, tool as agentTool, type Model, type ModelResponse } from '@openai/agents-core';
import { stepCountIs, streamText, tool as aiTool } from 'ai';
import { z } from 'zod';
import { scriptedModel, type ScriptedResponse } from '../../src/adapters/model/scriptedModel.js';

/** One AI SDK turn over `script` (dshScript(n): the same responses dsh's turn gets). */
export async function aiSdkTurn(script: ScriptedResponse[]): Promise<void> {
  const result = streamText({
    model: scriptedModel(script),
    prompt: 'go',
    stopWhen: stepCountIs(4),
    tools: { noop: aiTool({ description: 'does nothing', inputSchema: z.object({ i: z.number() }), needsApproval: () => false, execute: async () => 'ok' }) },
  });
  await result.consumeStream();
  const ran = (await result.steps).reduce((k, s) => k + s.toolResults.length, 0);
  const asked = script.reduce((k, r) => k + (r.toolCalls?.length ?? 0), 0);
  if (ran !== asked) throw new Error(`AI SDK turn ran ${ran} of ${asked} calls`);
}

/** agents-core's model answers of a turn of N calls (built once per N, reused by every turn). */
export function agentsScript(n: number): readonly ModelResponse[] {
  const usage = new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 });
  return [
    {
      usage,
      output: Array.from({ length: n }, (_, i) => ({ type: 'function_call' as const, callId: `call-1-${i}`, name: 'noop', arguments: JSON.stringify({ i }), status: 'completed' as const })),
    },
    { usage, output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done' }] }] },
  ];
}

const noop = agentTool({ name: 'noop', description: 'does nothing', parameters: z.object({ i: z.number() }), needsApproval: async () => false, execute: async () => 'ok' });

/** One agents-core turn: a new agent and runner per turn (as dsh builds a runtime per turn). */
export async function agentsCoreTurn(script: readonly ModelResponse[]): Promise<void> {
  let step = 0;
  const model: Model = {
    getResponse: async () => script[Math.min(step++, script.length - 1)]!,
    getStreamedResponse: () => {
      throw new Error('not streamed');
    },
  };
  const agent = new Agent({ name: 'bench', instructions: 'go', tools: [noop], model });
  const result = await new Runner({ tracingDisabled: true }).run(agent, 'go', { maxTurns: 4 });
  const ran = result.newItems.filter((item) => item.type === 'tool_call_output_item').length;
  const asked = script[0]!.output.filter((o) => o.type === 'function_call').length;
  if (ran !== asked) throw new Error(`agents-core turn ran ${ran} of ${asked} calls`);
}
