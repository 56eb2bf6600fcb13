// Runs bash calls as a dsh process would (test/security/bashSandboxHost.ts: the real built-in
// tools and a runtime), in a process whose own environment is `env`, and returns the results.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SandboxMode } from '../../src/adapters/sandbox/sandbox.js';
import type { ToolResult } from '../../src/protocol/index.js';

export async function runBashCalls(o: {
  mode: SandboxMode;
  root: string;
  env: Record<string, string | undefined>;
  commands: string[];
  settings?: Record<string, unknown>;
}): Promise<ToolResult[]> {
  const host = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./bashSandboxHost.ts', import.meta.url))], {
    env: { ...o.env, DSH_SBX_ROOT: o.root, DSH_SBX_MODE: o.mode, DSH_SBX_COMMANDS: JSON.stringify(o.commands), DSH_SBX_SETTINGS: JSON.stringify(o.settings ?? {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  host.stdout.on('data', (c: Buffer) => (out += c.toString()));
  host.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((r) => host.once('exit', (c) => r(c)));
  if (code !== 0) throw new Error(`the attack host exited ${code}: ${err}`);
  return JSON.parse(out) as ToolResult[];
}

/** Directories outside /tmp (the sandbox's /tmp is private), removed by {@link removeWorlds}. */
const made: string[] = [];
export async function worldDir(prefix = 'dsh-sec-'): Promise<string> {
  const d = await mkdtemp(join('/var/tmp', prefix));
  made.push(d);
  return d;
}
export async function removeWorlds(): Promise<void> {
  await Promise.all(made.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}
