import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openAtomicWriter, writeFileAtomic } from '../../../src/adapters/fs/atomicWrite.js';
import { tempDir } from '../workspaceFixture.js';

describe('atomic file writes', () => {
  it('writes in pieces to a hidden temp file; the target appears only at commit, whole, with the exact mode', async () => {
    const dir = await tempDir();
    const file = join(dir, 'out.txt');
    await writeFile(file, 'old');
    const w = await openAtomicWriter(file, 0o600);
    const piece = new Uint8Array(3);
    for (const s of ['abc', 'def', 'g']) {
      piece.set(Buffer.from(s));
      await w.write(piece.subarray(0, s.length)); // the caller reuses its buffer
    }
    expect(w.size).toBe(7);
    expect(await readFile(file, 'utf8')).toBe('old');
    expect((await readdir(dir)).sort()).toEqual(['.out.txt.' + w.tempPath.split('.out.txt.')[1], 'out.txt'].sort());
    await w.commit();
    expect(await readFile(file, 'utf8')).toBe('abcdefg');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['out.txt']);
    await w.abort(); // after a commit: nothing to undo
    expect(await readFile(file, 'utf8')).toBe('abcdefg');
  });

  it('commits under another name in the same directory only; abort leaves nothing behind', async () => {
    const dir = await tempDir();
    const w = await openAtomicWriter(join(dir, 'provisional'), 0o600);
    await w.write(Buffer.from('content'));
    await expect(w.commit(join(await tempDir(), 'elsewhere'))).rejects.toThrow(/not in/);
    await w.abort();
    expect(await readdir(dir)).toEqual([]);
    const v = await openAtomicWriter(join(dir, 'provisional'));
    await v.write(Buffer.from('content'));
    await v.commit(join(dir, 'final'));
    expect(await readdir(dir)).toEqual(['final']);
    await expect(v.write(Buffer.from('more'))).rejects.toThrow(/finished/);
  });

  it('writeFileAtomic replaces a file whole', async () => {
    const dir = await tempDir();
    const file = join(dir, 'sub', 'f.bin');
    await writeFileAtomic(file, new Uint8Array([1, 2, 3]), 0o640);
    await writeFileAtomic(file, new Uint8Array([4, 5]), 0o640);
    expect([...(await readFile(file))]).toEqual([4, 5]);
    expect((await stat(file)).mode & 0o777).toBe(0o640);
    expect(await readdir(join(dir, 'sub'))).toEqual(['f.bin']);
  });
});
