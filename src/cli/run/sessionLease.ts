/**
 * One process writes a session at a time: `dsh run` and `dsh resume` hold the session's writer
 * lease (the JSONL store's lease files beside the log, `<id>.lease.<token>`, see
 * src/adapters/store/jsonlStore.ts) from before they read the log until they have closed it.
 *
 * - Taken before the log is opened (the open cuts a torn tail: a write); a second process on the
 *   same session fails at once with a `StoreConflictError` `LEASE_HELD` naming the session and the
 *   holder (`dsh: session ID: LEASE_HELD: in use by dsh run (pid P on H) …`, exit 1), having
 *   read and written nothing.
 * - Renewed every third of its time to live while the process lives (the timer does not keep the
 *   process up); released when the session is closed, and at once when the process exits some
 *   other way (`process.exit`).
 * - A lease left by a process that died: taken over at once when its holder ran on this host and
 *   its pid is gone; otherwise (another host) once it expires (`ttlMs`, default 30 s).
 * - A renewal that finds the lease expired (this process was stopped, the machine slept) takes it
 *   again when nobody held it meanwhile (the next token is this process's); when somebody did,
 *   the lease is lost: `onLost` (the caller stops writing).
 */
import { hostname } from 'node:os';
import { basename, dirname } from 'node:path';
import { createJsonlStore } from '../../adapters/store/jsonlStore.js';
import { StoreConflictError, type Lease } from '../../runtime/store/sessionStore.js';

/** A session's lease for 30 s, renewed every 10 s. */
export const SESSION_LEASE_MS = 30_000;

export interface HeldSessionLease {
  /** The lease as last taken or renewed. */
  readonly lease: Lease;
  /** Stops renewing and gives the lease up (the next process may take it at once). */
  release(): void;
}

export interface HoldSessionLeaseOptions {
  /** What holds it, as the refusal names it: `run`, `resume`. */
  command: string;
  ttlMs?: number;
  /** The lease was taken over by another process: this one must write nothing more. */
  onLost(error: StoreConflictError): void;
}

/** The lease key of a log file: its name without `.jsonl`, as a store session id. */
export function sessionLeaseKey(file: string): string {
  const key = basename(file).replace(/\.jsonl$/, '').replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\./, '_').slice(0, 128);
  return key || '_';
}

const OWNER = /^dsh (\S+) pid (\d+) on (\S+) #/;

/** `dsh run (pid 123 on host)` for an owner this module wrote, else the owner as it is. */
function holderText(owner: string): string {
  const m = OWNER.exec(owner);
  return m ? `dsh ${m[1]} (pid ${m[2]} on ${m[3]})` : owner;
}

/** True when the owner is a dsh process on this host that is no longer running. */
function deadLocalProcess(owner: string): boolean {
  const m = OWNER.exec(owner);
  if (!m || m[3] !== hostname()) return false;
  const pid = Number(m[2]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Takes the lease of the session logged in `file`, or throws `LEASE_HELD` naming its holder. */
export async function holdSessionLease(file: string, o: HoldSessionLeaseOptions): Promise<HeldSessionLease> {
  const ttlMs = o.ttlMs ?? SESSION_LEASE_MS;
  const id = sessionLeaseKey(file);
  const store = createJsonlStore({ dir: dirname(file), repairOnAcquire: false, fsync: false });
  const owner = `dsh ${o.command} pid ${process.pid} on ${hostname()} #${Math.random().toString(36).slice(2, 8)}`;
  let lease = await store.acquire(id, owner, ttlMs);
  if (!lease) {
    const held = store.holder(id);
    if (held && deadLocalProcess(held.owner) && store.expire(id, held.token)) lease = await store.acquire(id, owner, ttlMs);
  }
  if (!lease) {
    const held = store.holder(id);
    const who = held ? `${holderText(held.owner)}, its lease renewed until ${new Date(held.expiresAt).toISOString()}` : 'another process';
    throw new StoreConflictError('LEASE_HELD', basename(file).replace(/\.jsonl$/, ''), `in use by ${who}; one process writes a session at a time: try again once it has ended`);
  }
  let current = lease;
  let done = false;
  const renew = async () => {
    if (done) return;
    try {
      current = await store.renew(current, ttlMs);
    } catch (e) {
      if (done) return;
      // Expired with nobody in between: the next token is ours again.
      const again = await store.acquire(id, owner, ttlMs).catch(() => undefined);
      if (again && again.token === current.token + 1) {
        current = again;
        return;
      }
      if (again) store.releaseSync(again);
      stop();
      o.onLost(e instanceof StoreConflictError ? e : new StoreConflictError('LEASE_LOST', id, String(e)));
    }
  };
  const timer = setInterval(() => void renew(), Math.max(10, Math.floor(ttlMs / 3)));
  timer.unref();
  const onExit = () => release();
  process.on('exit', onExit);
  function stop() {
    done = true;
    clearInterval(timer);
    process.off('exit', onExit);
  }
  function release() {
    if (done) return;
    stop();
    try {
      store.releaseSync(current);
    } catch {
      // left to expire
    }
  }
  return {
    get lease() {
      return current;
    },
    release,
  };
}
