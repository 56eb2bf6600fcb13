/**
 * The session store on JSONL files, one per session in a directory: `<dir>/<id>.jsonl` is the
 * session log as `dsh run` writes it (the same sink, line format, checksums and replay:
 * src/adapters/log/jsonlLog.ts), and the writer lease is a set of lock files beside it,
 * `<dir>/<id>.lease.<token>`, each holding `{ owner, token, expiresAt }`.
 *
 * - Taking the lease is an exclusive create (`O_EXCL`) of the file for the next token: of two
 *   processes taking over the same expired lease, exactly one creates it. A live lease (the
 *   highest token's file, unexpired) is not taken. Renewing rewrites the holder's own file
 *   (write + rename); releasing marks it expired. A new holder removes the files of earlier
 *   tokens (one file per session stays, the highest, so a token is never reused). A token is a
 *   file name ending in a plain decimal number (`1`, `17`): any other name beside the log
 *   (`<id>.lease.1e3`, `.0x10`, `.07`, a temp file) is not a lease and is ignored.
 * - Each append checks, just before it writes: the holder's file still says it holds the lease, with
 *   at least `marginMs` left; no file for the next token exists (nobody took over); and the log's
 *   last `seq` is the expected one (the file's size is the one this store last saw, else its new
 *   lines are read). Then the lines are written and fsynced.
 *
 * - The check and the write happen under an append lock, `<dir>/<id>.append` (an exclusive create,
 *   removed once the lines are fsynced), so two appends (two processes, two stores) never both
 *   pass the `seq` check: one writes, the other gets `SEQ_CONFLICT`. A lock left by a process that
 *   died is broken once it is `staleLockMs` old.
 *
 * A plain file has no atomic compare-and-append: that lock is advisory, and a holder stalled longer
 * than `staleLockMs` inside it could still write after its lock was broken. The Postgres store has
 * no such window (one transaction). Node only.
 */
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertSessionId, StoreConflictError, type Lease, type SessionStore } from '../../runtime/store/sessionStore.js';
import { readJsonlLog } from '../log/jsonlReplay.js';
import { createJsonlLogSink, type JsonlLogSink } from '../log/jsonlSink.js';

/** A JSONL session store: its directory, and how its logs are committed. */
export interface JsonlStoreOptions {
  /** The directory holding `<id>.jsonl` and its lease files (created if missing). */
  dir: string;
  /** fsync each append (default true). */
  fsync?: boolean;
  /** An append needs at least this much of its lease left (default 1000 ms, at most a quarter of the lease). */
  marginMs?: number;
  /** An append lock (or an unreadable lease file) this old, ms, was left by a dead process: broken, taken over (default 10 s). */
  staleLockMs?: number;
  /** Milliseconds since the epoch (default Date.now). */
  now?: () => number;
  /**
   * A new holder cuts a torn last line off the log as it takes the lease (default true). false: the
   * lease alone, the log left as it is, unread (a holder that reads and repairs the log itself,
   * as `dsh run` and `dsh resume` do, and does not append through this store).
   */
  repairOnAcquire?: boolean;
}

/** A session store over a directory of JSONL logs, one `<id>.jsonl` per session (the embedded default). */
export interface JsonlSessionStore extends SessionStore {
  readonly kind: 'jsonl';
  readonly dir: string;
  /** The log file of a session. */
  fileOf(sessionId: string): string;
  /** Session ids with a log file. */
  sessions(): Promise<string[]>;
  /** The session's current lease while it is live (unexpired), else undefined. */
  holder(sessionId: string): Lease | undefined;
  /** `release` at once, without closing anything (for a process on its way out). */
  releaseSync(lease: Lease): void;
  /**
   * Marks the lease `token` expired when it is still the session's current one, so `acquire` takes
   * it over at once: for a holder known to be dead (a process that is gone), never a live one.
   */
  expire(sessionId: string, token: number): boolean;
}

interface LeaseRecord {
  owner: string;
  token: number;
  expiresAt: number;
  ttlMs: number;
}

interface Tail {
  size: number;
  lastSeq: number;
}

/** A session store over a directory of JSONL logs, leased per session like `openJsonlSessionLog`. */
export function createJsonlStore(options: JsonlStoreOptions): JsonlSessionStore {
  const dir = options.dir;
  mkdirSync(dir, { recursive: true });
  const now = options.now ?? Date.now;
  const fileOf = (id: string) => {
    assertSessionId(id);
    return join(dir, `${id}.jsonl`);
  };
  const leaseFile = (id: string, token: number) => join(dir, `${id}.lease.${token}`);
  const sinks = new Map<string, JsonlLogSink>();
  const tails = new Map<string, Tail>();

  const readRecord = (id: string, token: number): LeaseRecord | undefined => {
    try {
      const r = JSON.parse(readFileSync(leaseFile(id, token), 'utf8')) as LeaseRecord;
      return typeof r.owner === 'string' && typeof r.token === 'number' && typeof r.expiresAt === 'number' ? r : undefined;
    } catch {
      return undefined;
    }
  };
  const writeRecord = (id: string, r: LeaseRecord) => {
    const tmp = `${leaseFile(id, r.token)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    writeFileSync(tmp, JSON.stringify(r), { mode: 0o600 });
    renameSync(tmp, leaseFile(id, r.token));
  };
  /** The tokens of the session's lease files (names ending in a plain decimal: no sign, exponent, hex or leading zero). */
  const tokensOf = (id: string): number[] => {
    const prefix = `${id}.lease.`;
    const out: number[] = [];
    for (const name of readdirSync(dir)) {
      if (!name.startsWith(prefix)) continue;
      const rest = name.slice(prefix.length);
      if (!/^[1-9][0-9]{0,14}$/.test(rest)) continue;
      out.push(Number(rest));
    }
    return out;
  };
  const highestToken = (id: string): number => tokensOf(id).reduce((max, t) => (t > max ? t : max), 0);
  /** Takes `<id>.append` (exclusive create), waiting while another append holds it. */
  const lockAppend = async (id: string): Promise<() => void> => {
    const path = join(dir, `${id}.append`);
    const stale = options.staleLockMs ?? 10_000;
    for (let wait = 1; ; wait = Math.min(wait * 2, 20)) {
      try {
        writeFileSync(path, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
        return () => unlinkSync(path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      try {
        if (Date.now() - statSync(path).mtimeMs > stale) {
          // Renamed away first: of two breakers only one succeeds, the other retries.
          const aside = `${path}.broken.${process.pid}.${Math.random().toString(36).slice(2)}`;
          renameSync(path, aside);
          unlinkSync(aside);
          continue;
        }
      } catch {
        continue; // gone meanwhile
      }
      await new Promise((r) => setTimeout(r, wait));
    }
  };
  const toLease = (id: string, r: LeaseRecord): Lease => ({ sessionId: id, owner: r.owner, token: r.token, expiresAt: r.expiresAt });

  /** Why `lease` may not write now, or undefined when it may. */
  const fenced = (lease: Lease, margin: boolean): string | undefined => {
    const own = readRecord(lease.sessionId, lease.token);
    if (!own || own.owner !== lease.owner) return `lease ${lease.token} is not ${lease.owner}'s`;
    if (existsSync(leaseFile(lease.sessionId, lease.token + 1))) return `lease ${lease.token} was taken over (token ${lease.token + 1} exists)`;
    const left = own.expiresAt - now();
    const need = margin ? Math.min(options.marginMs ?? 1000, own.ttlMs / 4) : 0;
    if (left <= need) return `lease ${lease.token} ${left <= 0 ? 'expired' : `has ${left} ms left, under the ${need} ms an append needs`}`;
    return undefined;
  };

  /** The file's size and last seq now; reads only what was added since this store last looked. */
  const tailOf = async (id: string): Promise<Tail> => {
    const file = fileOf(id);
    let size = 0;
    try {
      size = statSync(file).size;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    const known = tails.get(id);
    if (known && known.size === size) return known;
    let tail: Tail;
    if (known && size > known.size) {
      // Another writer (or this store's own sink) added lines: the last complete one has the seq.
      const fd = openSync(file, 'r');
      try {
        const buf = Buffer.alloc(size - known.size);
        readSync(fd, buf, 0, buf.length, known.size);
        const text = buf.toString('utf8');
        const lines = text.split('\n');
        const complete = text.endsWith('\n') ? lines.slice(0, -1) : undefined;
        const last = complete?.[complete.length - 1];
        const json = last === undefined ? undefined : last.startsWith('{') ? last : last.slice(9);
        const seq = json === undefined ? NaN : Number((JSON.parse(json) as { seq?: unknown }).seq);
        tail = Number.isSafeInteger(seq) ? { size, lastSeq: seq } : await fullTail(id);
      } catch {
        tail = await fullTail(id);
      } finally {
        closeSync(fd);
      }
    } else tail = await fullTail(id);
    tails.set(id, tail);
    return tail;
  };
  const fullTail = async (id: string, repair = false): Promise<Tail> => {
    const file = fileOf(id);
    if (!existsSync(file)) return { size: 0, lastSeq: 0 };
    const r = await readJsonlLog(file, { repair });
    return { size: r.torn && !r.torn.repaired ? r.torn.offset : statSync(file).size, lastSeq: r.lastSeq };
  };

  return {
    kind: 'jsonl',
    dir,
    fileOf,
    async acquire(sessionId, owner, ttlMs) {
      assertSessionId(sessionId);
      const top = highestToken(sessionId);
      const current = top > 0 ? readRecord(sessionId, top) : undefined;
      const t = now();
      if (current && current.owner === owner && current.expiresAt > t) {
        const renewed = { ...current, expiresAt: t + ttlMs, ttlMs };
        writeRecord(sessionId, renewed);
        return toLease(sessionId, renewed);
      }
      if (top > 0 && current && current.expiresAt > t) return undefined;
      if (top > 0 && !current) {
        // Unreadable: being created this instant (live, to be safe), or left empty by a process
        // that died between creating and writing it (taken over once it is stale).
        let age = 0;
        try {
          age = t - statSync(leaseFile(sessionId, top)).mtimeMs;
        } catch {
          return undefined;
        }
        if (age < (options.staleLockMs ?? 10_000)) return undefined;
      }
      const record: LeaseRecord = { owner, token: top + 1, expiresAt: t + ttlMs, ttlMs };
      try {
        writeFileSync(leaseFile(sessionId, record.token), JSON.stringify(record), { flag: 'wx', mode: 0o600 });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') return undefined; // another one took it first
        throw e;
      }
      // A taker that read the directory long ago may have created a token below a later holder's
      // (earlier files are removed, below): a higher token, or any other live lease, means this
      // one is not taken.
      for (const other of tokensOf(sessionId)) {
        if (other === record.token) continue;
        const r = readRecord(sessionId, other);
        const fresh = !r && (() => {
          try {
            return t - statSync(leaseFile(sessionId, other)).mtimeMs < (options.staleLockMs ?? 10_000);
          } catch {
            return false;
          }
        })();
        if (other > record.token || (r && r.expiresAt > now()) || fresh) {
          try {
            unlinkSync(leaseFile(sessionId, record.token));
          } catch {
            // already gone
          }
          return undefined;
        }
      }
      // One lease file per session: the earlier holders' go (each is fenced: its own file is missing).
      for (const other of tokensOf(sessionId)) {
        if (other >= record.token) continue;
        try {
          unlinkSync(leaseFile(sessionId, other));
        } catch {
          // removed by another taker meanwhile
        }
      }
      // The new holder cuts a torn last line (a writer that died mid-write) before appending.
      if (options.repairOnAcquire ?? true) tails.set(sessionId, await fullTail(sessionId, true));
      else tails.delete(sessionId);
      return toLease(sessionId, record);
    },
    async renew(lease, ttlMs) {
      const why = fenced(lease, false);
      if (why) throw new StoreConflictError('LEASE_LOST', lease.sessionId, `${why}; not renewed`);
      const r: LeaseRecord = { owner: lease.owner, token: lease.token, expiresAt: now() + ttlMs, ttlMs };
      writeRecord(lease.sessionId, r);
      return toLease(lease.sessionId, r);
    },
    holder(sessionId) {
      assertSessionId(sessionId);
      const top = highestToken(sessionId);
      const r = top > 0 ? readRecord(sessionId, top) : undefined;
      return r && r.expiresAt > now() ? toLease(sessionId, r) : undefined;
    },
    releaseSync(lease) {
      if (fenced(lease, false)) return;
      const own = readRecord(lease.sessionId, lease.token)!;
      writeRecord(lease.sessionId, { ...own, expiresAt: 0 });
    },
    expire(sessionId, token) {
      assertSessionId(sessionId);
      if (highestToken(sessionId) !== token) return false;
      const r = readRecord(sessionId, token);
      if (!r) return false;
      writeRecord(sessionId, { ...r, expiresAt: 0 });
      return true;
    },
    async release(lease) {
      if (fenced(lease, false)) return;
      const own = readRecord(lease.sessionId, lease.token)!;
      writeRecord(lease.sessionId, { ...own, expiresAt: 0 });
      const sink = sinks.get(lease.sessionId);
      sinks.delete(lease.sessionId);
      await sink?.close();
    },
    async append(lease, expectedSeq, events) {
      const sid = lease.sessionId;
      events.forEach((e, i) => {
        if (e.seq !== expectedSeq + 1 + i) throw new StoreConflictError('SEQ_CONFLICT', sid, `event ${i} of the append has seq ${e.seq}, expected ${expectedSeq + 1 + i}`);
      });
      if (events.length === 0) return;
      const unlock = await lockAppend(sid);
      try {
        const why = fenced(lease, true);
        if (why) throw new StoreConflictError('LEASE_LOST', sid, why);
        const tail = await tailOf(sid);
        if (tail.lastSeq !== expectedSeq) throw new StoreConflictError('SEQ_CONFLICT', sid, `expected last seq ${expectedSeq}, the log has ${tail.lastSeq}`);
        let sink = sinks.get(sid);
        if (!sink) {
          sink = createJsonlLogSink({ path: fileOf(sid), fsync: options.fsync ?? true, commitOn: [] });
          sinks.set(sid, sink);
        }
        for (const e of events) sink.write(e);
        await sink.flush();
        const fd = openSync(fileOf(sid), 'r');
        try {
          tails.set(sid, { size: fstatSync(fd).size, lastSeq: events[events.length - 1]!.seq });
        } finally {
          closeSync(fd);
        }
      } finally {
        unlock();
      }
    },
    async read(sessionId, from = 1) {
      const file = fileOf(sessionId);
      if (!existsSync(file)) return [];
      const { events } = await readJsonlLog(file);
      return from <= 1 ? events : events.filter((e) => e.seq >= from);
    },
    async lastSeq(sessionId) {
      return (await tailOf(sessionId)).lastSeq;
    },
    async sessions() {
      return readdirSync(dir)
        .filter((n) => n.endsWith('.jsonl'))
        .map((n) => n.slice(0, -'.jsonl'.length));
    },
    async close() {
      const all = [...sinks.values()];
      sinks.clear();
      await Promise.all(all.map((s) => s.close()));
    },
  };
}
