/**
 * Where sessions live on disk: `.dsh/sessions/<id>.jsonl` under the directory `dsh run` works in.
 * Ids sort by start time (`20261130-094455-1a2b`), so a listing in name order is chronological.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';

export const SESSIONS_DIR = join('.dsh', 'sessions');

/** `<cwd>/.dsh/sessions`. */
export function sessionsDir(cwd: string): string {
  return join(cwd, SESSIONS_DIR);
}

/** A fresh session id: the UTC start time, then 4 random hex digits. */
export function newSessionId(now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const stamp = `${now.getUTCFullYear()}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}-${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}`;
  return `${stamp}-${randomBytes(2).toString('hex')}`;
}

/** What may be a session id (no path separators, no dots first): anything else is taken as a file. */
const ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** The log file of a new session (creates the directory). */
export function newSessionFile(cwd: string, id = newSessionId()): { id: string; file: string } {
  mkdirSync(sessionsDir(cwd), { recursive: true, mode: 0o700 });
  // Keeps the logs out of git, and out of the built-in grep and glob (they honour .gitignore).
  const ignore = join(cwd, '.dsh', '.gitignore');
  if (!existsSync(ignore)) writeFileSync(ignore, '*\n');
  return { id, file: join(sessionsDir(cwd), `${id}.jsonl`) };
}

/** `<id>` → `.dsh/sessions/<id>.jsonl` (when it exists, or no file of that name does); anything else → that path. */
export function sessionFileOf(cwd: string, idOrFile: string): string {
  const asFile = isAbsolute(idOrFile) ? idOrFile : resolve(cwd, idOrFile);
  if (ID.test(idOrFile) && !idOrFile.endsWith('.jsonl')) {
    const asId = join(sessionsDir(cwd), `${idOrFile}.jsonl`);
    if (existsSync(asId) || !existsSync(asFile)) return asId;
  }
  return asFile;
}

/** The ids of the sessions under `cwd`, oldest first (none when the directory is missing). */
export function listSessionIds(cwd: string): string[] {
  let names: string[];
  try {
    names = readdirSync(sessionsDir(cwd));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return names.filter((n) => n.endsWith('.jsonl')).map((n) => n.slice(0, -'.jsonl'.length)).sort();
}

/** The directory a session works in: `<dir>` for `<dir>/.dsh/sessions/<id>.jsonl`, else `fallback`. */
export function sessionWorkDir(file: string, fallback: string): string {
  const sessions = dirname(resolve(file));
  if (basename(sessions) === 'sessions' && basename(dirname(sessions)) === '.dsh') return dirname(dirname(sessions));
  return fallback;
}
