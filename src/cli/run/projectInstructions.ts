/**
 * The system prompt of `dsh run`: dsh's own lines, then the instructions a user and a project give
 * it, in this order (later ones are more specific):
 * - the user's `AGENTS.md` beside the user config (`$XDG_CONFIG_HOME/dsh/AGENTS.md`);
 * - the project's `AGENTS.md` (the convention Codex, opencode and others read): the nearest one
 *   from the working directory upward, up to the repository root (the nearest directory holding
 *   `.git`). Outside a repository only the working directory is looked at, as for
 *   `dsh.config.json`, so a stray `/tmp/AGENTS.md` left by someone else is never read;
 * - the config's `instructions`.
 * Each file is bounded (MAX_INSTRUCTIONS_BYTES; a longer one is cut, and says so).
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { userConfigPath } from '../config/load.js';

export const AGENTS_FILE = 'AGENTS.md';
export const MAX_INSTRUCTIONS_BYTES = 64 * 1024;

export const DEFAULT_SYSTEM = 'You are dsh, a coding agent working in the current directory through the tools you are given. Be brief.';

export interface SystemPrompt {
  readonly text: string;
  /** The instruction files read, in the order they were added. */
  readonly files: readonly string[];
}

const exists = (p: string) => stat(p).then(() => true, () => false);

/** The project's AGENTS.md: in `cwd`, or the nearest parent up to the repository root. */
export async function findProjectAgentsFile(cwd: string): Promise<string | undefined> {
  const start = resolve(cwd);
  let inRepo: boolean | undefined;
  for (let dir = start; ; dir = dirname(dir)) {
    const candidate = join(dir, AGENTS_FILE);
    if (await isFile(candidate)) return candidate;
    if (await exists(join(dir, '.git'))) return undefined;
    if (dirname(dir) === dir) return undefined;
    inRepo ??= await insideRepository(start);
    if (!inRepo) return undefined;
  }
}

async function insideRepository(dir: string): Promise<boolean> {
  for (let d = dirname(dir); ; d = dirname(d)) {
    if (await exists(join(d, '.git'))) return true;
    if (dirname(d) === d) return false;
  }
}

const isFile = (p: string) => stat(p).then((s) => s.isFile(), () => false);

async function readBounded(path: string): Promise<string | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch {
    return undefined;
  }
  if (bytes.length <= MAX_INSTRUCTIONS_BYTES) return bytes.toString('utf8');
  return `${bytes.subarray(0, MAX_INSTRUCTIONS_BYTES).toString('utf8')}\n… (${path} was cut at ${MAX_INSTRUCTIONS_BYTES} bytes)`;
}

/** The system prompt for a session working in `cwd`. */
export async function systemPrompt(o: { cwd: string; env: Readonly<Record<string, string | undefined>>; instructions?: string }): Promise<SystemPrompt> {
  const parts = [DEFAULT_SYSTEM];
  const files: string[] = [];
  const userFile = join(dirname(userConfigPath(o.env)), AGENTS_FILE);
  const projectFile = await findProjectAgentsFile(o.cwd);
  for (const file of [userFile, projectFile]) {
    if (file === undefined || !(await isFile(file))) continue;
    const text = await readBounded(file);
    if (text === undefined || !text.trim()) continue;
    files.push(file);
    parts.push(`Instructions from ${file}:\n\n${text.trim()}`);
  }
  if (o.instructions?.trim()) parts.push(`Instructions from the configuration:\n\n${o.instructions.trim()}`);
  return { text: parts.join('\n\n'), files };
}
