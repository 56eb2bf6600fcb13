/** Runs the `dsh` CLI from source (through tsx) as a real process in any directory. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const root = join(import.meta.dirname, '..', '..');
export const bin = join(root, 'src', 'cli', 'bin.ts');
export const tsxLoader = pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;

/** The command line that runs dsh from source: `node --import <tsx> src/cli/bin.ts`. */
export const dshArgv = (...args: string[]) => [process.execPath, '--import', tsxLoader, bin, ...args];

export interface DshRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
}

/** The environment for a child: no API keys (no test needs one), no debug. */
export function testEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/_API_KEY$|^DSH_|^NODE_OPTIONS$|^VITEST/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

/** Starts dsh in `cwd`, stdin closed (no TTY); `done` settles when it exits. */
export function startDsh(cwd: string, args: string[], env = testEnv()): { child: ChildProcess; done: Promise<DshRun>; out: () => string } {
  const [node, ...rest] = dshArgv(...args);
  const child = spawn(node!, rest, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<DshRun>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, out, err })));
  return { child, done, out: () => out };
}

export const dsh = (cwd: string, args: string[], env?: NodeJS.ProcessEnv) => startDsh(cwd, args, env).done;

/** Polls `check` until it returns a value (bounds only catch a hang). */
export async function waitFor<T>(check: () => T | undefined | false, what: string, timeoutMs = 60_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
