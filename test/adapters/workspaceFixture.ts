import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { ToolResult } from '../../src/protocol/index.js';
import type { Runtime } from '../../src/runtime/createRuntime.js';

const made: string[] = [];

/** A fresh temp directory, removed after the test. */
export async function tempDir(prefix = 'dsh-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

afterEach(async () => {
  await Promise.all(made.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

let seq = 0;

/** Runs one tool call through the runtime's real pipeline and returns its frozen result. */
export function call(rt: Runtime, toolName: string, input: unknown): Promise<ToolResult> {
  return rt.runCall({ callId: `call-${++seq}`, toolName, input }).result;
}
