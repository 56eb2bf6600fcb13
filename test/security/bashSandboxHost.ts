// A dsh process for test/security/bashSandbox.test.ts: dsh's secrets are in this process's real
// environment (its /proc/<pid>/environ), as they are in a user's. It runs each command of
// DSH_SBX_COMMANDS (a JSON array) as one `bash` call through the real built-in tools and a
// runtime, in the sandbox mode DSH_SBX_MODE over DSH_SBX_ROOT (more settings, such as `passEnv`,
// in DSH_SBX_SETTINGS as JSON), and prints the results as JSON.
import { createBuiltinTools } from '../../src/adapters/tools/builtinTools.js';
import type { SandboxMode } from '../../src/adapters/sandbox/sandbox.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';

const root = process.env.DSH_SBX_ROOT;
const mode = process.env.DSH_SBX_MODE as SandboxMode | undefined;
const commands = JSON.parse(process.env.DSH_SBX_COMMANDS ?? 'null') as string[] | null;
if (!root || !mode || !commands) throw new Error('DSH_SBX_ROOT, DSH_SBX_MODE and DSH_SBX_COMMANDS are required');
const settings = JSON.parse(process.env.DSH_SBX_SETTINGS ?? '{}') as Record<string, unknown>;
const tools = createBuiltinTools({ root, sandbox: { ...settings, mode } });
const rt = createRuntime({ tools: [...tools.all] });
const results = [];
for (const [i, command] of commands.entries()) {
  results.push(await rt.runCall({ callId: `attack-${i}`, toolName: 'bash', input: { command, timeoutMs: 60_000 } }).result);
}
await tools.sandbox.dispose();
process.stdout.write(`${JSON.stringify(results)}\n`);
