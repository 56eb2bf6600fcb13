/**
 * Whether bubblewrap can make the sandbox on this machine: it runs a real one (every namespace,
 * read-only root, private /tmp) around `/bin/sh -c 'echo $$'` and expects pid 1. Tried first with
 * `--unshare-user --disable-userns` (no user namespace can be made inside), then with
 * `--unshare-user-try` (as root where user namespaces are off, bubblewrap still makes the rest).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bwrapArgs } from './bwrapArgs.js';
import { unixSocketFilterFile } from './unixSocketFilter.js';

/** Whether bubblewrap works here (and with user namespaces and seccomp), or why not. */
export type BwrapProbe =
  | {
      readonly ok: true;
      readonly bwrap: string;
      readonly userns: boolean;
      /** Whether a seccomp filter can be loaded (`--seccomp`): the Unix-socket filter is used only then. */
      readonly seccomp?: boolean;
    }
  | { readonly ok: false; readonly reason: string };

function tryOnce(bwrap: string, args: string[], seccompFile?: string): Promise<string | undefined> {
  const [file, pre] = seccompFile === undefined ? [bwrap, []] : ['/bin/sh', ['-c', 'exec "$@" 9<"$0"', seccompFile, bwrap]];
  return new Promise((resolve) => {
    execFile(file, [...pre, ...args, '/bin/sh', '-c', 'echo $$'], { timeout: 30_000, encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } }, (err, stdout, stderr) => {
      if (!err && stdout.trim() === '1') return resolve(undefined);
      const code = (err as NodeJS.ErrnoException | null)?.code;
      if (code === 'ENOENT') return resolve(`${bwrap} was not found (install bubblewrap: apt-get install bubblewrap)`);
      const why = (stderr || '').trim() || (err ? err.message : `the probe printed ${JSON.stringify(stdout.trim())}, not pid 1`);
      resolve(`${bwrap}: ${why.split('\n')[0]!.slice(0, 300)}`);
    });
  });
}

/** Checks once that `bwrap` can start a sandboxed command on this machine. */
export async function probeBwrap(bwrap = 'bwrap'): Promise<BwrapProbe> {
  if (process.platform !== 'linux') return { ok: false, reason: `bubblewrap is Linux-only (this is ${process.platform})` };
  const dir = await mkdtemp(join(tmpdir(), 'dsh-probe-'));
  try {
    let reason = 'no variant was tried';
    for (const userns of [true, false]) {
      const args = bwrapArgs({ mode: 'workspace-write', root: dir, cwd: dir, tmpDir: dir, network: false, pin: [], readOnly: [], asPid1: true, userns });
      const failed = await tryOnce(bwrap, args);
      if (failed === undefined) {
        const filter = unixSocketFilterFile();
        const seccomp = filter !== undefined && (await tryOnce(bwrap, bwrapArgs({ mode: 'workspace-write', root: dir, cwd: dir, tmpDir: dir, network: false, pin: [], readOnly: [], asPid1: true, userns, seccompFd: 9 }), filter)) === undefined;
        return { ok: true, bwrap, userns, seccomp };
      }
      reason = failed;
      if (failed.includes('was not found')) break;
    }
    return { ok: false, reason };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const cache = new Map<string, Promise<BwrapProbe>>();

/** {@link probeBwrap}, once per process and bubblewrap path. */
export function bwrapSupport(bwrap = 'bwrap'): Promise<BwrapProbe> {
  let p = cache.get(bwrap);
  if (!p) cache.set(bwrap, (p = probeBwrap(bwrap)));
  return p;
}
