/**
 * One process writes a JSONL session log at a time: the session's writer lease. `openJsonlSessionLog`
 * takes it by default (src/adapters/log/jsonlLog.ts), `dsh run`, `dsh resume` and `dsh repair` take
 * it from before they read the log until they have closed it, and a runtime assembled by hand can
 * take it with `holdSessionLease(file, …)`.
 *
 * - **Keyed on the file, not on the name it was opened by.** Two leases are taken, both of which
 *   must be free:
 *   - beside the file's real path (symlinks resolved): `<real dir>/<id>.lease.<token>` in the JSONL
 *     store's format (src/adapters/store/jsonlStore.ts), which other hosts sharing the directory
 *     see too;
 *   - on the file's identity (device and inode) in a directory of this host and user
 *     (`$XDG_RUNTIME_DIR/dsh/leases`, else `<tmp>/dsh-<uid>/leases`): a hard link elsewhere, by
 *     any other name, is the same file and finds it held.
 *   A file that does not exist yet is created (empty) first, so that it has an identity.
 * - A second writer fails at once with a `StoreConflictError` `LEASE_HELD` naming the session and the
 *   holder (`in use by dsh run (pid P on H), its lease renewed until …`), having read and written
 *   nothing of the log.
 * - Renewed every third of its time to live while the process lives (the timer does not keep the
 *   process up); released when the session is closed, and at once when the process exits some
 *   other way (`process.exit`).
 * - A lease left by a process that died: taken over at once when its holder ran on this host and
 *   its pid is gone or a zombie (exited, not yet reaped); otherwise (another host) once it expires
 *   (`ttlMs`, default 30 s).
 * - A renewal that finds the lease expired (this process was stopped, the machine slept) takes it
 *   again when nobody held it meanwhile; when somebody did, the lease is lost: `onLost` (the
 *   caller stops writing; `openJsonlSessionLog`'s sink drops everything after that).
 *
 * Not covered: a hard link made on another host of a shared file system (the identity lease is
 * this host's). Node only.
 */
import { closeSync, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, realpathSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { createJsonlStore, type JsonlSessionStore } from './jsonlStore.js';
import { StoreConflictError, type Lease } from '../../runtime/store/sessionStore.js';

/** A session's lease lasts 30 s unless renewed (renewed every 10 s). */
export const SESSION_LEASE_MS = 30_000;

/** A session file's writer lease, renewed while held. */
export interface HeldSessionLease {
  /** The lease as last taken or renewed (the one beside the file). */
  readonly lease: Lease;
  /** The log file's real path (what the lease is held on). */
  readonly file: string;
  /** Set once the lease was lost (taken over by another process). */
  readonly lost: StoreConflictError | undefined;
  /** Stops renewing and gives the lease up (the next process may take it at once). Idempotent. */
  release(): void;
}

/** How a lease is taken: who holds it (as a refusal names it), how long, and what to do when it is lost. */
export interface HoldSessionLeaseOptions {
  /** What holds it, as a refusal names it (`dsh <command> (pid P on H)`): `run`, `resume`, … (default `library`). */
  command?: string;
  /** Time to live, ms (default SESSION_LEASE_MS). */
  ttlMs?: number;
  /** The lease was taken over by another process: this one must write nothing more. */
  onLost?(error: StoreConflictError): void;
  /** Where this host's identity leases live (default `$XDG_RUNTIME_DIR/dsh/leases`, else `<tmp>/dsh-<uid>/leases`). */
  hostDir?: string;
}

/** The lease key of a log file: its name without `.jsonl`, as a store session id. */
export function sessionLeaseKey(file: string): string {
  const key = basename(file).replace(/\.jsonl$/, '').replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\./, '_').slice(0, 128);
  return key || '_';
}

/** This host's and user's directory for identity leases (0700, this user's; checked, never trusted). */
export function hostLeaseDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const runtime = env.XDG_RUNTIME_DIR;
  const dir = runtime && isAbsolute(runtime) ? join(runtime, 'dsh', 'leases') : join(tmpdir(), `dsh-${uid}`, 'leases');
  return dir;
}

/** Creates `dir` (0700) and refuses one another user could write or swap (a symlink, a foreign owner). */
function privateDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const d of [dirname(dir), dir]) {
    const st = lstatSync(d);
    const uid = typeof process.getuid === 'function' ? process.getuid() : st.uid;
    if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o022) !== 0) {
      throw new Error(`the lease directory ${d} is not a private directory of this user (owner ${st.uid}, mode ${(st.mode & 0o777).toString(8)}): remove it, or set XDG_RUNTIME_DIR`);
    }
  }
  return dir;
}

const OWNER = /^dsh (\S+) pid (\d+) on (\S+) #/;

/** `dsh run (pid 123 on host)` for an owner this module wrote, else the owner as it is. */
function holderText(owner: string): string {
  const m = OWNER.exec(owner);
  return m ? `dsh ${m[1]} (pid ${m[2]} on ${m[3]})` : owner;
}

/** True when `pid` on this host has exited: gone, or a zombie (exited, not yet reaped by its parent). */
export function processEnded(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    // /proc/<pid>/stat: "pid (comm) S …"; comm may hold spaces and parentheses: the state follows the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'Z' || state === 'X';
  } catch {
    return false; // no /proc (not Linux): a live pid counts as alive
  }
}

/** True when the owner is a dsh process on this host that is no longer running. */
function deadLocalProcess(owner: string): boolean {
  const m = OWNER.exec(owner);
  if (!m || m[3] !== hostname()) return false;
  const pid = Number(m[2]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  return processEnded(pid);
}

/** The log's real path and identity; the file is created (empty, 0600) when missing. */
function identityOf(file: string): { real: string; key: string } {
  const fd = openSync(file, 'a', 0o600);
  try {
    const st = fstatSync(fd, { bigint: true });
    if (!st.isFile()) throw new Error(`${file} is not a regular file`);
    return { real: realpathSync(file), key: `inode-${st.dev}-${st.ino}` };
  } finally {
    closeSync(fd);
  }
}

interface Part {
  store: JsonlSessionStore;
  id: string;
  current: Lease;
}

/** Takes one of the two leases, or returns who holds it. */
async function take(store: JsonlSessionStore, id: string, owner: string, ttlMs: number): Promise<Lease | { held: Lease | undefined }> {
  let lease = await store.acquire(id, owner, ttlMs);
  if (!lease) {
    const held = store.holder(id);
    if (held && deadLocalProcess(held.owner) && store.expire(id, held.token)) lease = await store.acquire(id, owner, ttlMs);
  }
  if (lease) return lease;
  // Refused, but no holder could be read: the winner's record was being written (or it had just
  // let go). Look again a little later, so the refusal can name the holder: the winner is another
  // process, which a loaded machine may not schedule for a while (up to about 3 s in all).
  for (let tries = 0; tries < 40; tries++) {
    const held = store.holder(id);
    if (held) return { held };
    await new Promise((r) => setTimeout(r, Math.min(100, 1 + tries * 5)));
    lease = await store.acquire(id, owner, ttlMs);
    if (lease) return lease;
  }
  return { held: store.holder(id) };
}

/** Takes the lease of the session logged in `file`, or throws `LEASE_HELD` naming its holder. */
export async function holdSessionLease(file: string, o: HoldSessionLeaseOptions = {}): Promise<HeldSessionLease> {
  const ttlMs = o.ttlMs ?? SESSION_LEASE_MS;
  const name = basename(file).replace(/\.jsonl$/, '');
  const { real, key } = identityOf(file);
  const owner = `dsh ${o.command ?? 'library'} pid ${process.pid} on ${hostname()} #${Math.random().toString(36).slice(2, 8)}`;
  const byPath: Omit<Part, 'current'> = { store: createJsonlStore({ dir: dirname(real), repairOnAcquire: false, fsync: false }), id: sessionLeaseKey(real) };
  const byIdentity: Omit<Part, 'current'> = { store: createJsonlStore({ dir: privateDir(o.hostDir ?? hostLeaseDir()), repairOnAcquire: false, fsync: false }), id: key };
  const refuse = (held: Lease | undefined) => {
    const who = held ? `${holderText(held.owner)}, its lease renewed until ${new Date(held.expiresAt).toISOString()}` : 'another process';
    return new StoreConflictError('LEASE_HELD', name, `in use by ${who}; one process writes a session at a time: try again once it has ended`);
  };
  const first = await take(byPath.store, byPath.id, owner, ttlMs);
  if (!('token' in first)) throw refuse(first.held);
  const second = await take(byIdentity.store, byIdentity.id, owner, ttlMs);
  if (!('token' in second)) {
    byPath.store.releaseSync(first);
    throw refuse(second.held);
  }
  const parts: Part[] = [
    { ...byPath, current: first },
    { ...byIdentity, current: second },
  ];

  let done = false;
  let lost: StoreConflictError | undefined;
  const renewPart = async (p: Part) => {
    try {
      p.current = await p.store.renew(p.current, ttlMs);
    } catch (e) {
      // Expired with nobody in between: the next token is ours again.
      const again = await p.store.acquire(p.id, owner, ttlMs).catch(() => undefined);
      if (again && again.token === p.current.token + 1) {
        p.current = again;
        return;
      }
      if (again) p.store.releaseSync(again);
      throw e instanceof StoreConflictError ? e : new StoreConflictError('LEASE_LOST', name, String(e));
    }
  };
  const renew = async () => {
    if (done) return;
    try {
      for (const p of parts) await renewPart(p);
    } catch (e) {
      if (done) return;
      lost = e as StoreConflictError;
      release();
      o.onLost?.(lost);
    }
  };
  const timer = setInterval(() => void renew(), Math.max(10, Math.floor(ttlMs / 3)));
  timer.unref();
  const onExit = () => release();
  process.on('exit', onExit);
  function release() {
    if (done) return;
    done = true;
    clearInterval(timer);
    process.off('exit', onExit);
    for (const p of parts) {
      try {
        p.store.releaseSync(p.current);
      } catch {
        // left to expire
      }
    }
  }
  return {
    get lease() {
      return parts[0]!.current;
    },
    file: real,
    get lost() {
      return lost;
    },
    release,
  };
}
