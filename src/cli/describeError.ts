/**
 * One line for an error the CLI reports (exit 1): a file that cannot be opened or read, a
 * corrupt log, anything else thrown. Never a stack trace: main.ts adds it under `DSH_DEBUG=1`.
 */

const REASONS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EISDIR: 'is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EMFILE: 'too many open files',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'file name too long',
  EIO: 'input/output error',
};

interface ErrnoLike {
  code?: unknown;
  path?: unknown;
  message?: unknown;
  cause?: unknown;
}

/** `path: reason` for a file-system error (also when wrapped as another error's `cause`), else the message's first line. */
export function describeError(e: unknown): string {
  try {
    for (let cur: unknown = e, depth = 0; cur && typeof cur === 'object' && depth < 5; cur = (cur as ErrnoLike).cause, depth++) {
      const { code, path } = cur as ErrnoLike;
      if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
        const reason = REASONS[code] ?? firstLine((cur as ErrnoLike).message) ?? code;
        return typeof path === 'string' ? `${path}: ${reason}` : `${reason} (${code})`;
      }
    }
    if (e instanceof Error) return firstLine(e.message) ?? e.name;
    return firstLine(String(e)) ?? 'unknown error';
  } catch {
    return 'an error that could not be described';
  }
}

function firstLine(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined;
  const line = text.split('\n', 1)[0]!.trim();
  return line || undefined;
}

/**
 * Runs `work` on `file`; a file-system error it throws without a path (a failed read, unlike a
 * failed open, names none) is given `file`, so the one-line report says which file.
 */
export async function onFile<T>(file: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    const errno = e as ErrnoLike | null;
    if (errno && typeof errno === 'object' && typeof errno.code === 'string' && errno.path === undefined) {
      try {
        errno.path = file;
      } catch {
        // a frozen error: reported without the path
      }
    }
    throw e;
  }
}
