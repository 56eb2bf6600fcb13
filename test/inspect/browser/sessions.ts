/** Sessions for the inspector's tests: recorded through the real runtime into a JSONL log, as `dsh run` does. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openJsonlSessionLog } from '../../../src/adapters/log/jsonlLog.js';
import { scriptedModel, type ScriptedResponse } from '../../../src/adapters/model/scriptedModel.js';
import { createAgentSession } from '../../../src/cli/run/agentSession.js';
import { newSessionFile } from '../../../src/cli/run/sessionFiles.js';
import type { ApprovalService } from '../../../src/runtime/pipeline/index.js';

export function workDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-inspect-'));
  writeFileSync(join(dir, 'a.txt'), 'alpha\nbeta\n');
  return dir;
}

const allowOnce: ApprovalService = { request: async () => 'allowed-once' };

/** Runs one turn of `responses` in `dir` and returns its session log file. */
export async function recordSession(dir: string, responses: readonly ScriptedResponse[], approval = allowOnce): Promise<string> {
  const { file } = newSessionFile(dir);
  const { log, sink } = await openJsonlSessionLog(file);
  const model = scriptedModel(responses);
  const session = createAgentSession({ cwd: dir, log, model: () => model, approval, maxSteps: responses.length + 1 });
  await session.startTurn('inspect me').done;
  await session.runtime.close();
  await sink.close();
  return file;
}
