// A dsh process for test/security/bashOrphans.test.ts: it runs one `bash` call through the real
// built-in tool and a runtime, and waits. The test SIGKILLs this process mid-call and then checks
// that nothing the call started survives. (The command comes through the environment, so this
// process's own argv does not carry the test's marker.)
import { createBuiltinTools } from '../../src/adapters/tools/builtinTools.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';

const root = process.env.DSH_ORPHAN_ROOT;
const command = process.env.DSH_ORPHAN_COMMAND;
if (!root || !command) throw new Error('DSH_ORPHAN_ROOT and DSH_ORPHAN_COMMAND are required');
const rt = createRuntime({ tools: [...createBuiltinTools({ root }).all] });
const result = await rt.runCall({ callId: 'orphan-host', toolName: 'bash', input: { command, timeoutMs: 600_000 } }).result;
process.stdout.write(`${JSON.stringify(result)}\n`);
