import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Replaces `file` with `data` so that readers see either the old or the new content, never a
 * mix: the bytes go to a temp file beside it, are synced, then renamed over it. An existing
 * file's permission bits are kept.
 */
export async function writeFileAtomic(file: string, data: Uint8Array, mode?: number): Promise<void> {
  const dir = dirname(file);
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `.${basename(file)}.${randomBytes(6).toString('hex')}.dsh-tmp`);
  try {
    const fh = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode ?? 0o666);
    try {
      await fh.writeFile(data);
      // open() applies the umask; an explicit chmod restores an existing file's exact mode.
      if (mode !== undefined) await fh.chmod(mode);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(temp, file);
  } catch (e) {
    await unlink(temp).catch(() => undefined);
    throw e;
  }
}
