/**
 * The system prompt of `dsh run`: dsh's own lines, then the instructions a user and a project give
 * it, in this order (later ones are more specific):
 * - the user's `AGENTS.md` beside the user config (`$XDG_CONFIG_HOME/dsh/AGENTS.md`);
 * - the project's `AGENTS.md` (the convention Codex, opencode and others read): the nearest one
 *   from the working directory upward, up to the repository root (the nearest directory holding
 *   `.git`). Outside a repository only the working directory is looked at, as for
 *   `dsh.config.json`, so a stray `/tmp/AGENTS.md` left by someone else is never read;
 * - the config's `instructions`.
 *
 * A repository is hostile input (SPEC §10.9): the project's file is opened through the same
 * confinement as the `read` tool, inside the directory the search ended in (the repository root,
 * or the working directory): a symlink that leads out of it (`ln -s /proc/self/environ
 * AGENTS.md`), a FIFO, a socket or a device is refused, and said so. Every file (the user's too,
 * which may be a symlink of the user's own dotfiles) is read by descriptor, only if it is a regular
 * file, and never more than MAX_INSTRUCTIONS_BYTES of it: a longer one is cut, and the cut is said
 * in the prompt and on the terminal (`notes`).
 */
import { constants } from 'node:fs';
import { lstat, open, realpath, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { openInWorkspace } from '../../adapters/tools/sandboxPath.js';
import { toolErrorInfo } from '../../runtime/toolError.js';
import { userConfigPath } from '../../config/load.js';

export const AGENTS_FILE = 'AGENTS.md';
export const MAX_INSTRUCTIONS_BYTES = 64 * 1024;

export const DEFAULT_SYSTEM = 'You are dsh, a coding agent working in the current directory through the tools you are given. Be brief.';

export interface SystemPrompt {
  readonly text: string;
  /** The instruction files read, in the order they were added. */
  readonly files: readonly string[];
  /** What the terminal should be told: a file cut at the bound, or refused (and why). */
  readonly notes: readonly string[];
}

const exists = (p: string) => stat(p).then(() => true, () => false);
const lexists = (p: string) => lstat(p).then(() => true, () => false);

/** Where the project's AGENTS.md is, and the directory it must stay inside (the repository root or the working directory). */
export interface ProjectAgentsFile {
  readonly file: string;
  readonly root: string;
}

/** The project's AGENTS.md: in `cwd`, or the nearest parent up to the repository root. */
export async function findProjectAgentsFile(cwd: string): Promise<ProjectAgentsFile | undefined> {
  const start = resolve(cwd);
  const root = (await repositoryRoot(start)) ?? start;
  for (let dir = start; ; dir = dirname(dir)) {
    // lstat: the name is there (a symlink too: whether it may be followed is decided when it is opened).
    const candidate = join(dir, AGENTS_FILE);
    if (await lexists(candidate)) return { file: candidate, root };
    if (dir === root || dirname(dir) === dir) return undefined;
  }
}

/** The nearest directory from `dir` upward that holds `.git`, or undefined outside a repository. */
async function repositoryRoot(dir: string): Promise<string | undefined> {
  for (let d = dir; ; d = dirname(d)) {
    if (await exists(join(d, '.git'))) return d;
    if (dirname(d) === d) return undefined;
  }
}

/** At most `max + 1` bytes of an open regular file (one more than the bound says it was cut). */
async function readAtMost(handle: FileHandle, max: number): Promise<Buffer> {
  const buf = Buffer.alloc(max + 1);
  let n = 0;
  while (n < buf.length) {
    const { bytesRead } = await handle.read(buf, n, buf.length - n, n);
    if (bytesRead === 0) break;
    n += bytesRead;
  }
  return buf.subarray(0, n);
}

type Read = { text: string; cut: boolean } | { refused: string };

/** The text of an open file, bounded. */
async function readOpened(handle: FileHandle): Promise<Read> {
  try {
    const bytes = await readAtMost(handle, MAX_INSTRUCTIONS_BYTES);
    const cut = bytes.length > MAX_INSTRUCTIONS_BYTES;
    return { text: bytes.subarray(0, MAX_INSTRUCTIONS_BYTES).toString('utf8'), cut };
  } finally {
    await handle.close();
  }
}

/** The project's file, opened inside `root` by descriptor (the `read` tool's confinement). */
async function readConfined(root: string, file: string): Promise<Read | undefined> {
  let opened;
  try {
    opened = await openInWorkspace(await realpath(root), relative(root, file));
  } catch (e) {
    const info = toolErrorInfo(e);
    return { refused: info ? `${info.code}: it leads outside ${root}` : 'it cannot be read' };
  }
  if (opened.kind === 'missing') return undefined;
  if (opened.kind === 'dir') {
    await opened.dir.close();
    return { refused: 'it is a directory' };
  }
  if (opened.kind === 'other') return { refused: 'it is not a regular file (a FIFO, a socket or a device)' };
  return readOpened(opened.handle);
}

/** The user's own file: may be a symlink (dotfiles), but only a regular file is read, and never more than the bound. */
async function readUserFile(file: string): Promise<Read | undefined> {
  let handle: FileHandle;
  try {
    // O_NONBLOCK: opening a FIFO never waits for a writer; it is then refused as not a regular file.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch {
    return undefined;
  }
  const st = await handle.stat().catch(() => undefined);
  if (!st?.isFile()) {
    await handle.close();
    return { refused: 'it is not a regular file' };
  }
  return readOpened(handle);
}

/** The system prompt for a session working in `cwd`. */
export async function systemPrompt(o: { cwd: string; env: Readonly<Record<string, string | undefined>>; instructions?: string }): Promise<SystemPrompt> {
  const parts = [DEFAULT_SYSTEM];
  const files: string[] = [];
  const notes: string[] = [];
  const userFile = join(dirname(userConfigPath(o.env)), AGENTS_FILE);
  const project = await findProjectAgentsFile(o.cwd);
  const reads: [string, Promise<Read | undefined>][] = [[userFile, readUserFile(userFile)]];
  if (project) reads.push([project.file, readConfined(project.root, project.file)]);
  for (const [file, pending] of reads) {
    const read = await pending;
    if (read === undefined) continue;
    if ('refused' in read) {
      notes.push(`${file} was not read: ${read.refused}`);
      continue;
    }
    if (!read.text.trim()) continue;
    files.push(file);
    const cutLine = `… (${file} was cut at ${MAX_INSTRUCTIONS_BYTES} bytes)`;
    if (read.cut) notes.push(`${file} is longer than ${MAX_INSTRUCTIONS_BYTES} bytes: only its first ${MAX_INSTRUCTIONS_BYTES} were read`);
    parts.push(`Instructions from ${file}:\n\n${read.text.trim()}${read.cut ? `\n${cutLine}` : ''}`);
  }
  if (o.instructions?.trim()) parts.push(`Instructions from the configuration:\n\n${o.instructions.trim()}`);
  return { text: parts.join('\n\n'), files, notes };
}
