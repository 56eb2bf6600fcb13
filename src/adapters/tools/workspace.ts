/**
 * The per-session workspace: the sandbox root, the file versions this session has seen, and the
 * `fs/write-intent` / `fs/edit-intent` guards every change passes (SPEC §2 stage 4).
 */
import { createHash } from 'node:crypto';
import { readFile, realpath, stat } from 'node:fs/promises';
import { ErrorCode } from '../../protocol/index.js';
import { ToolError } from '../../runtime/toolError.js';
import { writeFileAtomic } from '../fs/atomicWrite.js';
import { resolveInWorkspace, type SandboxedPath } from './sandboxPath.js';

/** What a file looked like when this session read or wrote it. */
export interface FileVersion {
  readonly mtimeMs: number;
  readonly size: number;
  readonly sha256: string;
}

/** A file as read: its bytes and the version they belong to. */
export interface FileSnapshot {
  readonly path: SandboxedPath;
  readonly bytes: Buffer;
  readonly version: FileVersion;
  readonly mode: number;
}

/** Cleared by `fs/write-intent`: where to write, and the mode to keep if the file exists. */
export interface WriteIntent {
  readonly path: SandboxedPath;
  readonly existed: boolean;
  readonly mode?: number;
}

/** Cleared by `fs/edit-intent`: the current (= last read) content to edit. */
export interface EditIntent {
  readonly path: SandboxedPath;
  readonly text: string;
  readonly mode: number;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const errno = (e: unknown) => (e as NodeJS.ErrnoException | undefined)?.code;

/** A sandboxed workspace root plus what one session has read and written in it. */
export class Workspace {
  private realRootP: Promise<string> | undefined;
  private readonly versions = new Map<string, FileVersion>();

  constructor(readonly root: string) {}

  /** The root with symlinks resolved: every sandbox check compares against it. */
  realRoot(): Promise<string> {
    return (this.realRootP ??= realpath(this.root).catch((e) => {
      this.realRootP = undefined;
      throw new ToolError(ErrorCode.FS_NOT_FOUND, `workspace root ${this.root} is not accessible: ${(e as Error).message}`);
    }));
  }

  /** Resolves a path inside the workspace, or throws `FS_OUTSIDE_WORKSPACE`. */
  async resolve(given: string): Promise<SandboxedPath> {
    return resolveInWorkspace(await this.realRoot(), given);
  }

  /** The version this session last saw of a (resolved) file, if any. */
  lastSeen(real: string): FileVersion | undefined {
    return this.versions.get(real);
  }

  /** Reads a file inside the workspace and records the version seen. */
  async readFile(given: string): Promise<FileSnapshot> {
    const path = await this.resolve(given);
    const snap = await this.snapshot(path);
    if (!snap) throw new ToolError(ErrorCode.FS_NOT_FOUND, `${path.display} does not exist`);
    this.versions.set(path.real, snap.version);
    return snap;
  }

  /**
   * `fs/write-intent`: a new file may be created; an existing one may be replaced only if this
   * session has read it and it has not changed since.
   */
  async writeIntent(given: string): Promise<WriteIntent> {
    const path = await this.resolve(given);
    const snap = await this.snapshot(path);
    const seen = this.versions.get(path.real);
    if (!snap) {
      if (seen) throw stale(path, 'was deleted since this session read it');
      return { path, existed: false };
    }
    this.checkFresh(path, snap.version, 'overwriting');
    return { path, existed: true, mode: snap.mode };
  }

  /** `fs/edit-intent`: the file must exist, have been read by this session, and be unchanged since. */
  async editIntent(given: string): Promise<EditIntent> {
    const path = await this.resolve(given);
    const snap = await this.snapshot(path);
    if (!snap) throw new ToolError(ErrorCode.FS_NOT_FOUND, `${path.display} does not exist; create it with write`);
    this.checkFresh(path, snap.version, 'editing');
    const text = snap.bytes.toString('utf8');
    // A lossy decode would be written back: bytes that are not UTF-8 are left alone.
    if (!Buffer.from(text, 'utf8').equals(snap.bytes)) throw new ToolError(ErrorCode.TOOL_FAILED, `${path.display} is not UTF-8 text; edit cannot change it safely`);
    return { path, text, mode: snap.mode };
  }

  /** Writes atomically where an intent was cleared and records the new version as seen. */
  async commit(intent: { path: SandboxedPath; mode?: number }, bytes: Uint8Array): Promise<FileVersion> {
    await writeFileAtomic(intent.path.real, bytes, intent.mode);
    const st = await stat(intent.path.real);
    const version = { mtimeMs: st.mtimeMs, size: st.size, sha256: sha256(bytes) };
    this.versions.set(intent.path.real, version);
    return version;
  }

  private checkFresh(path: SandboxedPath, current: FileVersion, doing: string): void {
    const seen = this.versions.get(path.real);
    // Never read means the model has not seen what it would destroy; the remedy (read first) is
    // the same as for a stale read, so the code is too.
    if (!seen) throw stale(path, `has not been read in this session; read it before ${doing} it`);
    // The hash decides: a touch that leaves the content alone is not a conflict.
    if (seen.sha256 !== current.sha256) {
      const how = seen.size === current.size ? 'same size, different content' : `${seen.size} → ${current.size} bytes`;
      throw stale(path, `changed since this session last read it (${how}); read it again before ${doing} it`);
    }
  }

  private async snapshot(path: SandboxedPath): Promise<FileSnapshot | undefined> {
    let st;
    try {
      st = await stat(path.real);
    } catch (e) {
      if (errno(e) === 'ENOENT' || errno(e) === 'ENOTDIR') return undefined;
      throw e;
    }
    if (st.isDirectory()) throw new ToolError(ErrorCode.TOOL_FAILED, `${path.display} is a directory, not a file`);
    if (!st.isFile()) throw new ToolError(ErrorCode.TOOL_FAILED, `${path.display} is not a regular file`);
    let bytes: Buffer;
    try {
      bytes = await readFile(path.real);
    } catch (e) {
      if (errno(e) === 'ENOENT') return undefined;
      throw e;
    }
    return { path, bytes, version: { mtimeMs: st.mtimeMs, size: bytes.length, sha256: sha256(bytes) }, mode: st.mode & 0o7777 };
  }
}

function stale(path: SandboxedPath, why: string): ToolError {
  return new ToolError(ErrorCode.FS_STALE_VERSION, `${path.display} ${why}`);
}
