/**
 * Where a session handler finds its sessions. `memorySessionDirectory`: sessions the app creates
 * in this process (a runtime each). `jsonlSessionDirectory`: one JSONL log per session in a
 * directory, opened on first use (taking the file's writer lease, so no other process writes it
 * meanwhile) and kept open; a server restarted on the same directory serves the same sessions from
 * the same `seq`s. Session ids are checked before they name a file. Node only (the JSONL one).
 */
import { randomUUID } from 'node:crypto';
import { lstat, open as openFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { openJsonlSessionLog, readJsonlLog, type OpenJsonlSessionLogOptions, type OpenedJsonlSessionLog } from '../adapters/log/jsonlLog.js';
import { WIRE_SESSION_ID as SESSION_ID, type SessionSummary } from '../protocol/wire.js';
import { hostRuntime, summaryOf, type HostRuntimeOptions, type HostedSession } from './hostedSession.js';
import type { SessionDirectory } from './sessionHandler.js';


/** Sessions made in this process by `host(id)` (a new runtime each), listed while the process lives. */
export function memorySessionDirectory(options: {
  /** Makes session `id`: usually `hostRuntime({ id, runtime: createRuntime(…), approvals, turnOptions })`. */
  readonly host: (id: string) => HostedSession | Promise<HostedSession>;
  /** New session ids (default: random UUIDs). */
  readonly newId?: () => string;
}): SessionDirectory & {
  /** Makes a new session with `host`; resolves with its id. */
  create(): Promise<string>;
  /** Lists a session made elsewhere. */
  add(session: HostedSession): void;
} {
  const sessions = new Map<string, HostedSession>();
  return {
    list: async () => [...sessions.values()].map(summaryOf),
    open: async (id) => sessions.get(id),
    async create() {
      const id = (options.newId ?? randomUUID)();
      if (!SESSION_ID.test(id) || sessions.has(id)) throw new Error(`cannot create session ${JSON.stringify(id)}`);
      sessions.set(id, await options.host(id));
      return id;
    },
    add(session) {
      sessions.set(session.id, session);
    },
  };
}

/** The sessions `jsonlSessionDirectory` serves: a directory of logs, and how each is hosted and opened. */
export interface JsonlSessionDirectoryOptions {
  /** The directory of `<id>.jsonl` session logs. */
  readonly dir: string;
  /** Makes the runtime of a session whose log was just opened (the model and tools are the app's). */
  readonly host: (opened: OpenedJsonlSessionLog, id: string) => Omit<HostRuntimeOptions, 'id' | 'history' | 'close' | 'resumeOnOpen'>;
  /** How each log is opened (checkpoints, lease, group commit). */
  readonly log?: OpenJsonlSessionLogOptions;
}

/** One JSONL log per session in `dir`: `<id>.jsonl`. */
export function jsonlSessionDirectory(options: JsonlSessionDirectoryOptions): SessionDirectory & {
  /** Makes a new session; resolves with its id. */
  create(): Promise<string>;
  /** Lets every open session go (closes their logs and leases). */
  close(): Promise<void>;
} {
  const opening = new Map<string, Promise<HostedSession | undefined>>();
  const pathOf = (id: string) => join(options.dir, `${id}.jsonl`);

  const openSession = async (id: string): Promise<HostedSession | undefined> => {
    const path = pathOf(id);
    // Only a regular file is a session: no symlink leads the server to write elsewhere.
    const info = await lstat(path).catch(() => undefined);
    if (!info?.isFile()) return undefined;
    const opened = await openJsonlSessionLog(path, options.log);
    return hostRuntime({
      ...options.host(opened, id),
      id,
      // A log resumed from a checkpoint holds only what follows it: earlier events come from the file.
      history: async (from, to) => (await readJsonlLog(path)).events.filter((e) => e.seq >= from && e.seq <= to),
      close: () => opened.close(),
      // A log that ends on a suspended turn (a server stopped while a question waited): asked again.
      resumeOnOpen: true,
    });
  };

  return {
    async list() {
      const names = (await readdir(options.dir).catch(() => [] as string[])).filter((n) => n.endsWith('.jsonl') && SESSION_ID.test(n.slice(0, -6)));
      const out: SessionSummary[] = [];
      for (const name of names.sort()) {
        const id = name.slice(0, -6);
        const open = await opening.get(id)?.catch(() => undefined);
        out.push(open ? summaryOf(open) : { id, lastSeq: (await readJsonlLog(join(options.dir, name)).catch(() => ({ lastSeq: 0 }))).lastSeq });
      }
      return out;
    },
    open(id) {
      if (!SESSION_ID.test(id)) return Promise.resolve(undefined);
      let p = opening.get(id);
      if (!p) {
        p = openSession(id);
        opening.set(id, p);
        // A failed open is not kept: the next request tries again.
        p.then((s) => s ?? opening.delete(id), () => opening.delete(id));
      }
      return p;
    },
    async create() {
      const id = randomUUID();
      // `wx`: never an existing file, never through a symlink planted under that name.
      await (await openFile(pathOf(id), 'wx', 0o600)).close();
      return id;
    },
    async close() {
      const all = [...opening.values()];
      opening.clear();
      for (const p of all) await (await p.catch(() => undefined))?.close();
    },
  };
}
