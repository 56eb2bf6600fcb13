/**
 * bash cold start (row key `bashStart`, issue 23): ms per `bash` call of `true` through a runtime
 * and the built-in tool, in the default sandbox (`workspace-write`: bubblewrap with every
 * namespace, the read-only host, the private /tmp, the protected paths pinned) against the same
 * call unsandboxed (`full-access`: the PID namespace of `setpriv … unshare`, which bash used
 * before the sandbox), and against `process-group` (no namespace at all). Interleaved, after one
 * untimed warm-up of each; medians.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBuiltinTools } from '../../src/adapters/tools/builtinTools.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { median } from '../lib/stats.js';

export interface BashStartResult {
  /** Median ms per `true` call in workspace-write. */
  sandboxedMs: number;
  /** Median ms per `true` call in full-access (PID namespace). */
  unsandboxedMs: number;
  /** sandboxedMs ÷ unsandboxedMs. */
  ratio: number;
  /** Median ms per `true` call in full-access with process-group isolation. */
  processGroupMs: number;
}

export async function runBashStart(options: { quick: boolean }): Promise<{ result: BashStartResult; reps: number } | { notMeasured: string }> {
  const reps = options.quick ? 15 : 41;
  const root = await mkdtemp(join(tmpdir(), 'dsh-bashstart-'));
  try {
    await mkdir(join(root, '.git', 'hooks'), { recursive: true });
    await writeFile(join(root, '.git', 'config'), '[core]\n');
    await writeFile(join(root, 'dsh.config.json'), '{}\n');
    const kinds = [
      createBuiltinTools({ root }),
      createBuiltinTools({ root, sandbox: 'full-access' }),
      createBuiltinTools({ root, sandbox: 'full-access', bashIsolation: 'process-group' }),
    ].map((tools) => ({ tools, rt: createRuntime({ tools: [...tools.all] }) }));
    let seq = 0;
    const once = async (k: (typeof kinds)[number]) => {
      const t0 = process.hrtime.bigint();
      const r = await k.rt.runCall({ callId: `b${++seq}`, toolName: 'bash', input: { command: 'true' } }).result;
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (r.isError) throw new Error(r.content);
      return ms;
    };
    try {
      for (const k of kinds) await once(k);
    } catch (e) {
      return { notMeasured: `bash did not run: ${(e as Error).message.split('\n')[0]}` };
    }
    const samples: number[][] = kinds.map(() => []);
    for (let i = 0; i < reps; i++) {
      for (let j = 0; j < kinds.length; j++) {
        const k = (i + j) % kinds.length;
        samples[k]!.push(await once(kinds[k]!));
      }
    }
    for (const k of kinds) await k.tools.sandbox.dispose();
    const [sandboxedMs, unsandboxedMs, processGroupMs] = samples.map(median) as [number, number, number];
    return { result: { sandboxedMs, unsandboxedMs, ratio: sandboxedMs / unsandboxedMs, processGroupMs }, reps };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
