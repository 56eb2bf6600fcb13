/**
 * The files one tool call walks through, from the model's stream to its committed result: run a
 * warm turn with one call and one with two (a scripted model, a no-op tool, one pre-execute
 * listener), count every function's calls with V8's precise coverage, and list the files under
 * `machines/` and `src/` holding a function that ran more often for the second call. A newcomer
 * following one call reads these files; issue 33 asks that they be few.
 *
 *   npx tsx scripts/callWalk.ts            named functions (what a reader follows by name)
 *   npx tsx scripts/callWalk.ts --all      anonymous ones too (arrows handed to other files)
 */
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { scriptedModel } from '../src/adapters/model/scriptedModel.js';
import { createRuntime } from '../src/runtime/createRuntime.js';
import { defineTool } from '../src/runtime/defineTool.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const all = process.argv.includes('--all');

const noop = defineTool({ name: 'noop', input: z.object({ i: z.number() }), isConcurrencySafe: () => true, execute: async () => 'ok' });
const rt = createRuntime({ tools: [noop] });
rt.hooks.on('tools/pre-execute', 'allow', () => ({ kind: 'allow' }));
const turn = async (calls: number) => {
  const model = scriptedModel([{ toolCalls: Array.from({ length: calls }, (_, i) => ({ toolName: 'noop', input: { i } })) }, { text: 'done' }]);
  await rt.startTurn({ model, input: 'x' }).done;
};
// Warm: lazily made parts (the index, caches) exist before anything is counted.
for (let i = 0; i < 3; i++) {
  await turn(1);
  await turn(2);
}

const session = new Session();
session.connect();
await session.post('Profiler.enable');
/** Calls per function (file, name, offset) during one turn of `calls` calls. */
const callCounts = async (calls: number): Promise<Map<string, number>> => {
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  await turn(calls);
  const { result } = await session.post('Profiler.takePreciseCoverage');
  await session.post('Profiler.stopPreciseCoverage');
  const counts = new Map<string, number>();
  for (const script of result) {
    if (!script.url.startsWith('file://')) continue;
    const path = fileURLToPath(script.url);
    if (!path.startsWith(root)) continue;
    const file = path.slice(root.length);
    if (!/^(machines|src)\//.test(file)) continue;
    for (const fn of script.functions) {
      if (!all && fn.functionName === '') continue;
      counts.set(`${file}\u0000${fn.functionName}\u0000${fn.ranges[0]!.startOffset}`, fn.ranges[0]!.count);
    }
  }
  return counts;
};
const one = await callCounts(1);
const two = await callCounts(2);
session.disconnect();
const files = new Set<string>();
for (const [key, count] of two) if (count > (one.get(key) ?? 0)) files.add(key.split('\u0000')[0]!);
console.log([...files].sort().join('\n'));
console.log(`${files.size} files (${all ? 'every function' : 'named functions'})`);
