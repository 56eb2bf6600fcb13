/**
 * The per-session workspace: the sandbox root, the file versions this session has seen, and the
 * `fs/write-intent` / `fs/edit-intent` guards every change passes (SPEC §2 stage 4).
 */
import { createHash } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode } from '../../protocol/index.js';
import { ToolError } from '../../runtime/toolError.js';
import { openAtomicWriterIn } from '../fs/atomicWrite.js';
import { realPathOfFd, type VerifiedDir } from '../fs/verifiedDir.js';
import { gitLocations } from '../sandbox/gitPointers.js';
import { protectedBy, protectedPaths, userConfigDir, type ProtectedPath } from '../sandbox/protectedPaths.js';
import { openInWorkspace, realpathAllowMissing, resolveEntry, resolveInWorkspace, type OpenedEntry, type SandboxedPath } from './sandboxPath.js';

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

export interface WorkspaceOptions {
  /**
   * The user-level dsh config directory, protected like `.dsh/` (default `$XDG_CONFIG_HOME/dsh`,
   * or `~/.config/dsh`). See `protectedPaths`.
   */
  readonly userConfigDir?: string;
}

/** A sandboxed workspace root plus what one session has read and written in it. */
export class Workspace {
  private realRootP: Promise<string> | undefined;
  private protectedP: Promise<readonly ProtectedPath[]> | undefined;
  private readonly versions = new Map<string, FileVersion>();

  constructor(
    readonly root: string,
    private readonly options: WorkspaceOptions = {},
  ) {}

  /**
   * The paths no file tool may change (SPEC §10.3: `.dsh/`, `dsh.config.json`, the user-level
   * config, `.git` and the git directories a `.git` file points at), resolved. Reading them is allowed.
   */
  protectedPaths(): Promise<readonly ProtectedPath[]> {
    return (this.protectedP ??= (async () => {
      const realRoot = await this.realRoot();
      const userDir = this.options.userConfigDir ?? userConfigDir(process.env, process.env.HOME || homedir());
      return protectedPaths({ root: realRoot, userConfigDir: await realpathAllowMissing(userDir).catch(() => userDir), ...gitLocations(realRoot) });
    })().catch((e) => {
      this.protectedP = undefined;
      throw e;
    }));
  }

  /** `FS_PROTECTED` naming the rule when `real` (absolute, resolved) is a protected path. */
  private async refuseProtected(real: string, display: string): Promise<void> {
    const hit = protectedBy(await this.protectedPaths(), real);
    if (hit) {
      throw new ToolError(
        ErrorCode.FS_PROTECTED,
        `${display} is protected and was not changed (rule ${hit.rule}: ${hit.reason}; SPEC §10.3: what governs the agent is out of its reach). ` +
          'Tools may read it but never change it; if it must change, ask the user to do it.',
      );
    }
  }

  /** The root with symlinks resolved: every sandbox check compares against it. */
  realRoot(): Promise<string> {
    return (this.realRootP ??= realpath(this.root).catch((e) => {
      this.realRootP = undefined;
      throw new ToolError(ErrorCode.FS_NOT_FOUND, `workspace root ${this.root} is not accessible: ${(e as Error).message}`);
    }));
  }

  /**
   * Resolves a path inside the workspace, or throws `FS_OUTSIDE_WORKSPACE`. For showing or keying
   * a path only: act on it through `open` / `openDirectory`, never by reopening the name.
   */
  async resolve(given: string): Promise<SandboxedPath> {
    return resolveInWorkspace(await this.realRoot(), given);
  }

  /** Opens what a path names, through descriptors (see `openInWorkspace`). The caller closes it. */
  async open(given: string): Promise<OpenedEntry> {
    return openInWorkspace(await this.realRoot(), given);
  }

  /**
   * Opens a directory of the workspace by descriptor (`FS_NOT_FOUND` if missing, `TOOL_FAILED` if
   * not a directory). The caller closes it.
   */
  async openDirectory(given: string): Promise<{ path: SandboxedPath; dir: VerifiedDir }> {
    const opened = await this.open(given);
    if (opened.kind === 'dir') return opened;
    if (opened.kind === 'file') await opened.handle.close();
    if (opened.kind === 'missing') throw new ToolError(ErrorCode.FS_NOT_FOUND, `${opened.path.display} does not exist`);
    throw new ToolError(ErrorCode.TOOL_FAILED, `${opened.path.display} is not a directory`);
  }

  /** The version this session last saw of a (resolved) file, if any. */
  lastSeen(real: string): FileVersion | undefined {
    return this.versions.get(real);
  }

  /** Reads a file inside the workspace and records the version seen. */
  async readFile(given: string): Promise<FileSnapshot> {
    const { path, snap } = await this.snapshot(given);
    if (!snap) throw new ToolError(ErrorCode.FS_NOT_FOUND, `${path.display} does not exist`);
    this.versions.set(path.real, snap.version);
    return snap;
  }

  /**
   * What a file holds now, for a preview (an approval's diff): read by descriptor like every read,
   * but not recorded as seen, so a preview never counts as the model having read the file.
   * `text` is undefined when it does not exist.
   */
  async peek(given: string): Promise<{ path: SandboxedPath; text?: string }> {
    const { path, snap } = await this.snapshot(given);
    return snap ? { path, text: snap.bytes.toString('utf8') } : { path };
  }

  /**
   * `fs/write-intent`: a new file may be created; an existing one may be replaced only if this
   * session has read it and it has not changed since.
   */
  async writeIntent(given: string): Promise<WriteIntent> {
    const { path, snap } = await this.snapshot(given);
    await this.refuseProtected(path.real, path.display);
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
    const { path, snap } = await this.snapshot(given);
    await this.refuseProtected(path.real, path.display);
    if (!snap) throw new ToolError(ErrorCode.FS_NOT_FOUND, `${path.display} does not exist; create it with write`);
    this.checkFresh(path, snap.version, 'editing');
    const text = snap.bytes.toString('utf8');
    // A lossy decode would be written back: bytes that are not UTF-8 are left alone.
    if (!Buffer.from(text, 'utf8').equals(snap.bytes)) throw new ToolError(ErrorCode.TOOL_FAILED, `${path.display} is not UTF-8 text; edit cannot change it safely`);
    return { path, text, mode: snap.mode };
  }

  /** Writes atomically where an intent was cleared and records the new version as seen. */
  async commit(intent: { path: SandboxedPath; mode?: number }, bytes: Uint8Array): Promise<FileVersion> {
    // The intent's path is already resolved: walk it again by descriptor (creating missing
    // directories), and create the temp file and rename it inside that directory's descriptor.
    // Protection is checked on the walk's own path before it creates a directory (a symlink met on
    // the way may have moved it), and again on the real path of the descriptor written into.
    const entry = await resolveEntry(await this.realRoot(), intent.path.real, {
      createDirs: true,
      followFinal: false,
      beforeCreate: (p) => this.refuseProtected(p.real, p.display),
    });
    const { parent, name } = entry;
    if (!parent || name === undefined) {
      await parent?.close();
      throw new ToolError(ErrorCode.TOOL_FAILED, `${intent.path.display} is not a file that can be written`);
    }
    let st;
    try {
      await this.refuseProtected(join(await realPathOfFd(parent.fd), name), entry.path.display);
      if (entry.stat?.isDirectory()) throw new ToolError(ErrorCode.TOOL_FAILED, `${intent.path.display} is a directory, not a file`);
      const w = await openAtomicWriterIn(parent, name, intent.mode);
      try {
        await w.write(bytes);
        st = await w.commit();
      } catch (e) {
        await w.abort();
        throw e;
      }
    } finally {
      await parent.close();
    }
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

  /** Opens `given` by descriptor and reads it whole; no `snap` when it does not exist. */
  private async snapshot(given: string): Promise<{ path: SandboxedPath; snap?: FileSnapshot }> {
    const opened = await this.open(given);
    const { path } = opened;
    if (opened.kind === 'missing') return { path };
    if (opened.kind === 'dir') {
      await opened.dir.close();
      throw new ToolError(ErrorCode.TOOL_FAILED, `${path.display} is a directory, not a file`);
    }
    if (opened.kind === 'other') throw new ToolError(ErrorCode.TOOL_FAILED, `${path.display} is not a regular file`);
    try {
      const bytes = await opened.handle.readFile();
      const st = opened.stat;
      return { path, snap: { path, bytes, version: { mtimeMs: st.mtimeMs, size: bytes.length, sha256: sha256(bytes) }, mode: st.mode & 0o7777 } };
    } finally {
      await opened.handle.close();
    }
  }
}

function stale(path: SandboxedPath, why: string): ToolError {
  return new ToolError(ErrorCode.FS_STALE_VERSION, `${path.display} ${why}`);
}
