/**
 * One process of a session on a JSONL log, for crossProcess.test.ts (run with tsx):
 *
 *   sessionProcess.ts LOG suspend          first turn; every approval suspends; exits when suspended
 *   sessionProcess.ts LOG resume ANSWER    resumes the suspended turn, answering ANSWER
 *   sessionProcess.ts LOG hang             resumes and never answers (the test kills it)
 *   sessionProcess.ts LOG turn             a new turn repeating the first `run` (nobody may be asked)
 *
 * Tool bodies append a line to ran.txt beside the log, so the test sees which bodies ran, across
 * processes. Prints one JSON line: the outcome, the model requests this process made, the questions.
 */
import { appendFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { openJsonlSessionLog } from '../../../src/adapters/log/jsonlLog.js';
import { scriptedModel } from '../../../src/adapters/model/index.js';
import type { ApprovalAnswer } from '../../../src/protocol/index.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { closeOpenWork } from '../../../src/runtime/openWork.js';
import { suspendingApproval, type ApprovalService } from '../../../src/runtime/pipeline/approvalService.js';

const [file, phase, answer] = process.argv.slice(2) as [string, string, ApprovalAnswer | undefined];
const ran = join(dirname(file), 'ran.txt');
const note = (line: string) => appendFileSync(ran, `${line}\n`);

const read = defineTool({
  name: 'read',
  input: z.object({ path: z.string() }),
  isConcurrencySafe: () => true,
  execute: async (a) => (note(`read ${a.path}`), `contents of ${a.path}`),
});
const run = defineTool({
  name: 'run',
  input: z.object({ cmd: z.string() }),
  execute: async (a) => (note(`run ${a.cmd}`), `ran ${a.cmd}`),
});

const asked: string[] = [];
const approval: ApprovalService =
  phase === 'suspend'
    ? suspendingApproval
    : {
        request: (req) => {
          asked.push(`${req.callId} ${req.toolName} ${JSON.stringify(req.args)}`);
          process.stdout.write(`${JSON.stringify({ asking: req.callId })}\n`);
          if (phase === 'hang') return new Promise<never>(() => {});
          if (phase === 'turn') return Promise.resolve('denied');
          return Promise.resolve(answer!);
        },
      };

// DSH_TEST_GO_FILE: wait until that file exists before opening the log (processes started apart
// then open at one instant: sessionLease.test.ts races two of them).
const go = process.env.DSH_TEST_GO_FILE;
if (go) {
  process.stdout.write(`${JSON.stringify({ waiting: go })}\n`);
  while (!existsSync(go)) await new Promise((r) => setTimeout(r, 2));
}
const { log, sink } = await openJsonlSessionLog(file);
// What `dsh resume` does first: close what a crash left open (a pending suspension is kept).
const closed = closeOpenWork(log, 'closed on resume');
const rt = createRuntime({ log, tools: [read, run], approval });
rt.hooks.on('tools/pre-execute', 'ask-before-run', (call, next) => (call.toolName === 'run' ? { kind: 'ask', reason: 'runs a command' } : next()));

let model;
let handle;
if (phase === 'suspend') {
  model = scriptedModel([
    {
      toolCalls: [
        { toolName: 'read', input: { path: 'a' }, toolCallId: 'c0' },
        { toolName: 'run', input: { cmd: 'make' }, toolCallId: 'c1' },
        { toolName: 'read', input: { path: 'b' }, toolCallId: 'c2' },
        { toolName: 'run', input: { cmd: 'test' }, toolCallId: 'c3' },
      ],
    },
  ]);
  handle = rt.startTurn({ model, input: 'build and test' });
} else if (phase === 'turn') {
  model = scriptedModel([{ toolCalls: [{ toolName: 'run', input: { cmd: 'make' }, toolCallId: 'c9' }] }, { text: 'made again' }]);
  handle = rt.startTurn({ model, input: 'make again' });
} else {
  process.stdout.write(`${JSON.stringify({ pending: rt.pendingSuspension()?.approvals ?? null, closed })}\n`);
  model = scriptedModel([{ toolCalls: [{ toolName: 'run', input: { cmd: 'make' }, toolCallId: 'c4' }] }, { text: 'built and tested' }]);
  handle = rt.resumeTurn({ model });
}
const r = await handle.done;
await sink.close();
process.stdout.write(`${JSON.stringify({ outcome: r.outcome, steps: r.steps, text: r.text, modelRequests: model.calls.length, asked })}\n`);
// No process.exit: a suspended turn must leave nothing alive that keeps the process running.
