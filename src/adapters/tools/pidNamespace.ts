import { execFile } from 'node:child_process';

/**
 * Whether (and how) this machine can run a command in a PID namespace that dies with its owner.
 *
 * The chain is `setpriv --pdeathsig KILL -- unshare --pid --fork --kill-child [...] -- <command>`:
 * - `setpriv --pdeathsig KILL` makes `unshare` die when the process that spawned it dies (even by
 *   SIGKILL, when nothing in that process can clean up);
 * - `unshare --kill-child` makes the namespace's first process (its init) die when `unshare` dies;
 * - when a PID namespace's init dies, the kernel kills every process left in it: background jobs,
 *   `setsid` and double-forked processes included. None can leave the namespace.
 */
export type PidNamespaceProbe =
  | { readonly ok: true; /** The argv to put before the command. */ readonly prefix: readonly string[] }
  | { readonly ok: false; /** Why no variant worked (the last attempt's error). */ readonly reason: string };

export interface PidNamespaceTools {
  /** Default `setpriv` (from PATH); util-linux. */
  readonly setpriv?: string;
  /** Default `unshare` (from PATH); util-linux. */
  readonly unshare?: string;
}

const CORE = ['--pid', '--fork', '--kill-child'];
/** Tried in order: as root a plain PID namespace works; without root, a user namespace has to come first. */
const VARIANTS: readonly (readonly string[])[] = [
  [...CORE, '--mount-proc'],
  ['--user', '--map-root-user', ...CORE, '--mount-proc'],
  CORE,
  ['--user', '--map-root-user', ...CORE],
];

function tryPrefix(prefix: readonly string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    // Inside a fresh PID namespace the command is its init: pid 1.
    execFile(prefix[0]!, [...prefix.slice(1), '/bin/sh', '-c', 'echo $$'], { timeout: 30_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (!err && stdout.trim() === '1') return resolve(undefined);
      const why = (stderr || '').trim() || (err ? err.message : `the probe printed ${JSON.stringify(stdout.trim())}, not pid 1`);
      resolve(why.split('\n')[0]!.slice(0, 300));
    });
  });
}

/** Probes the variants in order; the first that runs a command as pid 1 of a new namespace wins. */
export async function probePidNamespace(tools: PidNamespaceTools = {}): Promise<PidNamespaceProbe> {
  if (process.platform !== 'linux') return { ok: false, reason: `PID namespaces are Linux-only (this is ${process.platform})` };
  let reason = 'no variant was tried';
  for (const v of VARIANTS) {
    const prefix = [tools.setpriv ?? 'setpriv', '--pdeathsig', 'KILL', '--', tools.unshare ?? 'unshare', ...v, '--'];
    const failed = await tryPrefix(prefix);
    if (failed === undefined) return { ok: true, prefix };
    reason = `${prefix.join(' ')}: ${failed}`;
  }
  return { ok: false, reason };
}

let cached: Promise<PidNamespaceProbe> | undefined;

/** {@link probePidNamespace} with the tools on PATH, probed once per process. */
export function pidNamespaceSupport(): Promise<PidNamespaceProbe> {
  cached ??= probePidNamespace();
  return cached;
}
