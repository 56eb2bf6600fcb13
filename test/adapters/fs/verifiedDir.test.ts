/**
 * The descriptor-safe primitives (`VerifiedDir`, `openAtomicWriterIn`) that the workspace tools
 * and the spill store build on: once a directory is open and verified, swapping its name for a
 * symlink leading elsewhere changes nothing about where reads, writes and renames land.
 */
import { mkdir, readdir, readFile, rename, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openAtomicWriterIn } from '../../../src/adapters/fs/atomicWrite.js';
import { VerifiedDir } from '../../../src/adapters/fs/verifiedDir.js';
import { ErrorCode } from '../../../src/protocol/index.js';
import { tempDir } from '../workspaceFixture.js';

async function setup() {
  const base = await tempDir();
  const root = join(base, 'root');
  const outside = join(base, 'outside');
  await mkdir(join(root, 'sub'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(root, 'sub', 'f.txt'), 'inside\n');
  await writeFile(join(outside, 'f.txt'), 'outside\n');
  return { base, root, outside };
}

describe('VerifiedDir', () => {
  it('keeps acting on the directory it opened after its name is swapped for a symlink leading out', async () => {
    const { root, outside } = await setup();
    const rootDir = await VerifiedDir.open(root);
    const sub = await rootDir.openDir('sub');
    try {
      // The attack: `sub` moves away and a symlink to the outside takes its name.
      await rename(join(root, 'sub'), join(root, 'moved'));
      await symlink(outside, join(root, 'sub'));
      const fh = await sub.openFile('f.txt', 0);
      expect(await fh.readFile('utf8')).toBe('inside\n');
      await fh.close();
      expect((await sub.readdir()).map((e) => e.name)).toEqual(['f.txt']);
      const w = await openAtomicWriterIn(sub, 'new.txt', 0o640);
      await w.write(Buffer.from('new\n'));
      const st = await w.commit();
      expect(st.size).toBe(4);
      expect(await readFile(join(root, 'moved', 'new.txt'), 'utf8')).toBe('new\n');
      expect((await stat(join(root, 'moved', 'new.txt'))).mode & 0o777).toBe(0o640);
      expect((await readdir(outside)).sort()).toEqual(['f.txt']);
      // Opening the new `sub` from the root does not follow the symlink.
      await expect(rootDir.openDir('sub')).rejects.toMatchObject({ code: 'ENOTDIR' });
    } finally {
      await sub.close();
      await rootDir.close();
    }
  });

  it('never follows a symlink entry, and refuses a directory that now lies outside its bound', async () => {
    const { base, root, outside } = await setup();
    await symlink(join(outside, 'f.txt'), join(root, 'sub', 'link.txt'));
    const rootDir = await VerifiedDir.open(root);
    const sub = await rootDir.openDir('sub');
    try {
      await expect(sub.openFile('link.txt', 0)).rejects.toMatchObject({ code: 'ELOOP' });
      expect(await sub.readlink('link.txt')).toBe(join(outside, 'f.txt'));
      expect(() => sub.at('../f.txt')).toThrow(/single file name/);
      // `sub` moved out of the root after it was opened: what is opened from it is refused.
      await rename(join(root, 'sub'), join(base, 'escaped'));
      await expect(sub.openFile('f.txt', 0)).rejects.toMatchObject({ code: ErrorCode.FS_OUTSIDE_WORKSPACE });
      await expect(VerifiedDir.open(join(base, 'escaped'), root)).rejects.toMatchObject({ code: ErrorCode.FS_OUTSIDE_WORKSPACE });
    } finally {
      await sub.close();
      await rootDir.close();
    }
  });

  it('commits under another name in the same directory only, and abort leaves nothing behind', async () => {
    const { root } = await setup();
    const dir = await VerifiedDir.open(join(root, 'sub'));
    try {
      const w = await openAtomicWriterIn(dir, 'provisional', 0o600);
      await w.write(Buffer.from('content'));
      await expect(w.commit('../elsewhere')).rejects.toMatchObject({ code: ErrorCode.INVALID_ARGS });
      await w.abort();
      expect(await readdir(join(root, 'sub'))).toEqual(['f.txt']);
      const v = await openAtomicWriterIn(dir, 'provisional');
      await v.write(Buffer.from('content'));
      await v.commit('final');
      expect((await readdir(join(root, 'sub'))).sort()).toEqual(['f.txt', 'final']);
    } finally {
      await dir.close();
    }
  });
});
