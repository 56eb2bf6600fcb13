import { spawn } from 'node:child_process';

export interface GroupRun {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Set when output beyond `maxOutputBytes` was dropped. */
  readonly droppedBytes: number;
}

export interface GroupRunOptions {
  readonly cwd: string;
  readonly signal: AbortSignal;
  /** Most bytes of stdout + stderr kept (default 8 MiB); the rest is counted and dropped. */
  readonly maxOutputBytes?: number;
  /** After SIGTERM, how long the group gets before SIGKILL (default 1 s). */
  readonly killGraceMs?: number;
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Runs a shell command as the leader of its own process group, and takes the whole group down
 * (SIGTERM, then SIGKILL) when the signal aborts or the shell exits: background jobs and
 * grandchildren die with it, so nothing it started outlives the call.
 */
export function runInProcessGroup(command: string, options: GroupRunOptions): Promise<GroupRun> {
  const maxOutput = options.maxOutputBytes ?? 8 * 1024 * 1024;
  const grace = options.killGraceMs ?? 1000;
  return new Promise<GroupRun>((resolve, reject) => {
    if (options.signal.aborted) return reject(options.signal.reason);
    const child = spawn('/bin/bash', ['-c', command], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      detached: true, // setsid(): the child leads a new process group we can kill as one
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pgid = child.pid;
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let kept = 0;
    let dropped = 0;
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      const room = maxOutput - kept;
      if (room <= 0) return void (dropped += chunk.length);
      into.push(room >= chunk.length ? chunk : chunk.subarray(0, room));
      dropped += Math.max(0, chunk.length - room);
      kept += Math.min(room, chunk.length);
    };
    child.stdout.on('data', collect(out));
    child.stderr.on('data', collect(err));

    const timers: NodeJS.Timeout[] = [];
    const killGroup = (sig: NodeJS.Signals) => {
      if (pgid === undefined) return;
      try {
        process.kill(-pgid, sig);
      } catch {
        // ESRCH: the group is already gone.
      }
    };
    const takeDown = () => {
      killGroup('SIGTERM');
      timers.push(setTimeout(() => killGroup('SIGKILL'), grace).unref());
    };
    const onAbort = () => takeDown();
    options.signal.addEventListener('abort', onAbort, { once: true });

    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      options.signal.removeEventListener('abort', onAbort);
      for (const t of timers) clearTimeout(t);
      // Whatever is still in the group after the shell is gone is an orphan in the making.
      killGroup('SIGKILL');
      if (options.signal.aborted) return reject(options.signal.reason);
      resolve({
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        droppedBytes: dropped,
      });
    };
    child.on('error', (e) => {
      if (done) return;
      done = true;
      options.signal.removeEventListener('abort', onAbort);
      for (const t of timers) clearTimeout(t);
      killGroup('SIGKILL');
      reject(e);
    });
    child.on('exit', (code, sig) => {
      exit = { code, signal: sig };
      // Background jobs still hold the output pipes open; take them down so 'close' can come.
      takeDown();
      // A process that escaped the group (setsid) may keep a pipe open forever: stop waiting.
      timers.push(
        setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
          finish();
        }, grace * 2).unref(),
      );
    });
    child.on('close', finish);
  });
}
