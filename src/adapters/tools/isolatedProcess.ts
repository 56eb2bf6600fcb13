import { spawn } from 'node:child_process';

/**
 * How a command's processes are kept from outliving it.
 * - `pid-namespace`: the command runs in its own PID namespace behind `prefix` (see
 *   pidNamespace.ts) under a small init; when the command ends, is stopped, or dsh itself dies, the
 *   init dies and the kernel kills every process in the namespace. Nothing escapes, `setsid` and
 *   double forks included.
 * - `process-group`: the command leads its own process group, which is killed whole. Weaker: a
 *   process that calls `setsid` (or is started that way) leaves the group and survives, and so does
 *   everything when dsh is SIGKILLed. Only used when the user opts in.
 */
export type Isolation =
  | { readonly kind: 'pid-namespace'; readonly prefix: readonly string[] }
  | { readonly kind: 'process-group' }
  | SandboxIsolation;

/**
 * - `sandboxed`: the command runs in an OS sandbox (src/adapters/sandbox) whose PID namespace has
 *   the init of {@link initArgv} as pid 1, in a session of its own. `file` and `args` are the whole
 *   command line (the sandbox's wrapper, then `initArgv(command, grace)`); the wrapper writes its
 *   JSON info (`child-pid`: the host pid of that init) to fd `infoFd`. A stop signals that session
 *   (the init ignores it; the command gets it), then kills the wrapper, whose death takes the
 *   init and with it the namespace down.
 */
export interface SandboxIsolation {
  readonly kind: 'sandboxed';
  readonly file: string;
  readonly args: readonly string[];
  readonly infoFd: 3;
}

/** The argv of the namespace init that runs `command` (see NAMESPACE_INIT). */
export function initArgv(command: string, killGraceMs = 1000): string[] {
  return ['/bin/bash', '-c', NAMESPACE_INIT, 'dsh-init', command, String(Math.ceil(killGraceMs / 50))];
}

/**
 * The namespace's init (pid 1), as a `bash -c` script: `$1` is the command, `$2` the grace in
 * 50 ms ticks. It runs the command as an ordinary child (so the command gets default signal
 * handling, which pid 1 would not, and a stop signal ends it instead of letting it go on to its
 * next step); once that exits, it sends SIGTERM to everything left in the namespace, waits (at
 * most the grace) for it to go, and exits with the command's status: its exit kills whatever
 * remains. Outside a fresh PID namespace `kill -1` would reach every process of the user: the
 * script refuses to run unless it is pid 1.
 */
const NAMESPACE_INIT = [
  '[ "$$" = 1 ] || { echo "dsh: bash isolation: not pid 1 of a new PID namespace, refusing to run" >&2; exit 125; }',
  '/bin/bash -c "$1"',
  'status=$?',
  'kill -TERM -1 2>/dev/null',
  'i=0',
  'while [ "$i" -lt "$2" ] && kill -0 -1 2>/dev/null; do sleep 0.05; i=$((i+1)); done',
  'exit "$status"',
].join('\n');

export interface ProcessRun {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Set when output beyond `maxOutputBytes` was dropped. */
  readonly droppedBytes: number;
  /** True when the run was stopped by its abort signal: the output is partial. */
  readonly stopped: boolean;
  /** The abort signal's reason when `stopped`. */
  readonly stopReason?: unknown;
}

export interface ProcessRunOptions {
  readonly cwd: string;
  readonly signal: AbortSignal;
  readonly isolation: Isolation;
  /** Most bytes of stdout + stderr kept (default 8 MiB); the rest is counted and dropped. */
  readonly maxOutputBytes?: number;
  /** After SIGTERM, how long the command gets before SIGKILL (default 1 s). */
  readonly killGraceMs?: number;
  readonly env?: NodeJS.ProcessEnv;
  /** Every chunk of output as it arrives (before the `maxOutputBytes` cut), e.g. to report progress. */
  readonly onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void;
  /** Written to the command's stdin, which is then closed (default: no stdin at all). */
  readonly stdin?: string;
}

/**
 * Runs `/bin/bash -c command` isolated as `options.isolation` says, and settles once the command
 * and everything it started are gone: on the shell's exit, or on abort (SIGTERM to its process
 * group, SIGKILL to all of it after the grace period). Resolves with the output collected so far
 * even when aborted (`stopped`); rejects only when the process cannot be spawned.
 */
export function runIsolated(command: string, options: ProcessRunOptions): Promise<ProcessRun> {
  const maxOutput = options.maxOutputBytes ?? 8 * 1024 * 1024;
  const grace = options.killGraceMs ?? 1000;
  const iso = options.isolation;
  return new Promise<ProcessRun>((resolve, reject) => {
    if (options.signal.aborted) {
      return resolve({ exitCode: null, signal: null, stdout: '', stderr: '', droppedBytes: 0, stopped: true, stopReason: options.signal.reason });
    }
    const [file, ...args] =
      iso.kind === 'sandboxed'
        ? [iso.file, ...iso.args]
        : iso.kind === 'pid-namespace'
          ? [...iso.prefix, ...initArgv(command, grace)]
          : ['/bin/bash', '-c', command];
    const input = options.stdin !== undefined ? 'pipe' : 'ignore';
    const child = spawn(file!, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      detached: true, // setsid(): the child leads a new process group we can signal as one
      stdio: (iso.kind === 'sandboxed' ? [input, 'pipe', 'pipe', 'pipe'] : [input, 'pipe', 'pipe']) as ['ignore', 'pipe', 'pipe'],
    });
    const pid = child.pid;
    if (options.stdin !== undefined) {
      const sink = (child as unknown as { stdin: NodeJS.WritableStream | null }).stdin;
      // A command that exits without reading its stdin closes the pipe: EPIPE is no failure.
      sink?.on('error', () => {});
      sink?.end(options.stdin);
    }
    // The sandbox's init leads a session of its own: its host pid comes on the info fd.
    let initPid: number | undefined;
    if (iso.kind === 'sandboxed') {
      const info = child.stdio[iso.infoFd] as NodeJS.ReadableStream | null;
      let text = '';
      info?.on('data', (d: Buffer) => {
        if (initPid !== undefined || text.length > 4096) return;
        text += d.toString('utf8');
        const m = /"child-pid"\s*:\s*(\d+)/.exec(text);
        if (m) initPid = Number(m[1]);
      });
      info?.on('error', () => {});
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let kept = 0;
    let dropped = 0;
    const collect = (stream: 'stdout' | 'stderr', into: Buffer[]) => (chunk: Buffer) => {
      options.onOutput?.(stream, chunk);
      const room = maxOutput - kept;
      if (room <= 0) return void (dropped += chunk.length);
      into.push(room >= chunk.length ? chunk : chunk.subarray(0, room));
      dropped += Math.max(0, chunk.length - room);
      kept += Math.min(room, chunk.length);
    };
    child.stdout.on('data', collect('stdout', out));
    child.stderr.on('data', collect('stderr', err));

    let exited = false;
    const timers: NodeJS.Timeout[] = [];
    const kill = (target: number, sig: NodeJS.Signals) => {
      try {
        process.kill(target, sig);
      } catch {
        // ESRCH: already gone.
      }
    };
    const killAll = () => {
      if (pid === undefined) return;
      // Until node has seen the exit, `pid` is ours (unreaped): killing `unshare` kills the
      // namespace's init (--kill-child), and with it the whole namespace.
      if (!exited) kill(pid, 'SIGKILL');
      kill(-pid, 'SIGKILL');
      // The sandbox's session (only while the wrapper lives: once it has exited, the init and
      // everything in its namespace are gone, and the number may be another group's by now).
      if (!exited && initPid !== undefined) kill(-initPid, 'SIGKILL');
    };
    const takeDown = () => {
      if (iso.kind === 'sandboxed') {
        // Not the wrapper (bubblewrap would die of SIGTERM and take everything down at once):
        // the command's session, so the command can stop before its next step, as elsewhere.
        if (initPid === undefined) return killAll();
        kill(-initPid, 'SIGTERM');
      } else if (pid !== undefined) kill(-pid, 'SIGTERM');
      timers.push(setTimeout(killAll, grace).unref());
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
      if (pid !== undefined) kill(-pid, 'SIGKILL');
      const stopped = options.signal.aborted;
      resolve({
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        droppedBytes: dropped,
        stopped,
        ...(stopped ? { stopReason: options.signal.reason as unknown } : {}),
      });
    };
    child.on('error', (e) => {
      if (done) return;
      done = true;
      options.signal.removeEventListener('abort', onAbort);
      for (const t of timers) clearTimeout(t);
      killAll();
      reject(e);
    });
    child.on('exit', (code, sig) => {
      exited = true;
      exit = { code, signal: sig };
      // In a PID namespace, the init's exit has already taken every process in it down. In a
      // process group, background jobs still hold the output pipes open: take them down.
      if (iso.kind === 'process-group') takeDown();
      // A process that escaped the group (setsid) may keep a pipe open forever: stop waiting.
      timers.push(
        setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
          (child.stdio[3] as NodeJS.ReadableStream & { destroy?: () => void } | undefined)?.destroy?.();
          finish();
        }, grace * 2).unref(),
      );
    });
    child.on('close', finish);
  });
}
