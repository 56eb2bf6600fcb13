/**
 * `explore` throughput (row key `explore`, issue 35): runs explored per second for a three-tool
 * agent with two listeners (a pre-execute listener that asks before writes, a post-execute audit),
 * every kind of choice on, crash points included. The model's script: two parallel reads, then a
 * write and a notify, then an answer. One untimed warm-up exploration, then timed ones.
 */
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/scriptedModel.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { explore, type ExploreOptions } from '../../src/testing/explore/explore.js';
import { median, nowMs } from '../lib/stats.js';

export interface ExploreBenchResult {
  /** Runs of one exploration. */
  runs: number;
  /** Of them, runs with a crash and a resume. */
  crashRuns: number;
  runsPerSec: number;
}

function options(maxRuns: number, crashes: { n: number }): ExploreOptions {
  const read = defineTool({ name: 'read', input: z.object({ path: z.string() }), readOnly: true, isConcurrencySafe: () => true, execute: ({ path }) => `text of ${path}` });
  const write = defineTool({ name: 'write', input: z.object({ path: z.string(), text: z.string() }), execute: ({ path }) => `wrote ${path}` });
  const notify = defineTool({ name: 'notify', input: z.object({ to: z.string() }), execute: ({ to }) => `told ${to}` });
  return {
    runtime: (world) => {
      if (world.process > 1) crashes.n++;
      const rt = createRuntime({ ...world, tools: [read, write, notify] });
      rt.hooks.on('tools/pre-execute', 'ask-writes', (call) => (call.toolName === 'write' ? { kind: 'ask', reason: 'a write' } : undefined));
      rt.hooks.on('tools/post-execute', 'audit', (draft) => void draft.content.length);
      return rt;
    },
    turn: {
      input: 'update the notes',
      model: scriptedModel([
        { toolCalls: [{ toolName: 'read', input: { path: 'a.md' } }, { toolName: 'read', input: { path: 'b.md' } }] },
        { toolCalls: [{ toolName: 'write', input: { path: 'notes.md', text: 'x' } }, { toolName: 'notify', input: { to: 'team' } }] },
        { text: 'done' },
      ]),
    },
    maxRuns,
    maxDeviations: 2,
    failureLogs: false,
  };
}

export async function runExploreBench(o: { quick: boolean }): Promise<{ result: ExploreBenchResult; reps: number }> {
  const maxRuns = o.quick ? 100 : 300;
  const reps = o.quick ? 1 : 3;
  await explore(options(20, { n: 0 }));
  const rates: number[] = [];
  let runs = 0;
  let crashRuns = 0;
  for (let i = 0; i < reps; i++) {
    const crashes = { n: 0 };
    const t0 = nowMs();
    const report = await explore(options(maxRuns, crashes));
    const ms = nowMs() - t0;
    runs = report.runs;
    crashRuns = crashes.n;
    rates.push(report.runs / (ms / 1000));
  }
  return { result: { runs, crashRuns, runsPerSec: median(rates) }, reps };
}
