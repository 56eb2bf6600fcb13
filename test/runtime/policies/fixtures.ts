/** Shared by the policy tests: fake tools that record their bodies, an approval service that records requests. */
import { z } from 'zod';
import type { ApprovalAnswer, ToolResult } from '../../../src/protocol/index.js';
import type { ApprovalService } from '../../../src/runtime/pipeline/index.js';
import type { Runtime } from '../../../src/runtime/createRuntime.js';
import { defineTool } from '../../../src/runtime/defineTool.js';

/** A tool with a `path` argument whose body records the paths it ran on. */
export function pathTool(name: string, extra: { readOnly?: boolean } = {}) {
  const ran: string[] = [];
  const tool = defineTool({
    name,
    input: z.object({ path: z.string().optional(), text: z.string().optional() }),
    readOnly: extra.readOnly,
    execute: ({ path }) => {
      ran.push(path ?? '');
      return `${name} ${path ?? ''}`;
    },
  });
  return { tool, ran };
}

/** A stand-in `bash` (same name and `command` argument) whose body only records the command. */
export function fakeBash() {
  const ran: string[] = [];
  const tool = defineTool({
    name: 'bash',
    input: z.object({ command: z.string() }),
    execute: ({ command }) => {
      ran.push(command);
      return 'ran';
    },
  });
  return { tool, ran };
}

/** An approval service answering `answer` to every request and recording them. */
export function recordingApproval(answer: ApprovalAnswer) {
  const asked: Array<Parameters<ApprovalService['request']>[0]> = [];
  const service: ApprovalService = {
    request: async (req) => {
      asked.push(req);
      return answer;
    },
  };
  return { service, asked };
}

let seq = 0;
export function call(rt: Runtime, toolName: string, input: unknown): Promise<ToolResult> {
  return rt.runCall({ callId: `p-${++seq}`, toolName, input }).result;
}
