import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, rename, stat, symlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { createFsSpillStore, type FsSpillStore } from '../../../src/adapters/spill/fsSpillStore.js';
import { createMemorySpillStore } from '../../../src/runtime/spill/memorySpillStore.js';
import { readAllSpilled, type SpillStore } from '../../../src/runtime/spill/spillStore.js';
import { ErrorCode } from '../../../src/protocol/index.js';
import { tempDir } from '../workspaceFixture.js';

const stores: FsSpillStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.remove()));
});

async function fsStore(sliceBytes?: number): Promise<FsSpillStore> {
  const s = createFsSpillStore({ baseDir: await tempDir(), sliceBytes });
  stores.push(s);
  return s;
}

const meta = { callId: 'c1', toolName: 't' };
const sample = 'héllo wörld 😀\n'.repeat(300) + '中文 the end';

describe.each([
  ['memory', async (): Promise<SpillStore> => createMemorySpillStore()],
  ['filesystem', fsStore],
])('%s spill store', (_name, make) => {
  it('returns the saved text byte for byte, whole or in chunks that never split a character', async () => {
    const store = await make();
    let { locator } = await store.save(sample, meta);
    expect(await readAllSpilled(store, locator)).toBe(sample);
    const small = 'héllo 😀 中\n'.repeat(20);
    ({ locator } = await store.save(small, meta));
    const total = Buffer.byteLength(small);
    for (const size of [1, 3, 7, 100]) {
      const parts: string[] = [];
      let offset = 0;
      for (;;) {
        const chunk = await store.read(locator, { offset, length: size });
        expect(chunk.totalBytes).toBe(total);
        expect(chunk.text).not.toContain('\uFFFD');
        parts.push(chunk.text);
        if (chunk.done) break;
        offset = chunk.nextOffset;
      }
      expect(parts.join('')).toBe(small);
    }
  });

  it('moves a start inside a character back to that character', async () => {
    const store = await make();
    const { locator } = await store.save('a😀b', meta);
    const chunk = await store.read(locator, { offset: 2, length: 1 });
    expect(chunk).toMatchObject({ text: '😀', offset: 1, nextOffset: 5 });
  });

  it('refuses locators it did not issue', async () => {
    const store = await make();
    await store.save(sample, meta);
    for (const bad of ['/etc/passwd', '../x', 'memory-spill:999/1', '']) {
      await expect(store.read(bad)).rejects.toMatchObject({ code: ErrorCode.FS_NOT_FOUND });
    }
  });
});

describe('filesystem spill store', () => {
  it('keeps spills in one private directory per session: directory 0700, files 0600', async () => {
    const store = await fsStore();
    const { locator } = await store.save(sample, meta);
    const dir = await store.directory();
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(locator)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual([locator.slice(dir.length + 1)]);
    const other = await fsStore();
    expect(await other.directory()).not.toBe(dir);
    await expect(other.read(locator)).rejects.toMatchObject({ code: ErrorCode.FS_NOT_FOUND });
  });

  it('never reads outside its directory, whatever the locator says', async () => {
    const store = await fsStore();
    const { locator } = await store.save(sample, meta);
    const dir = await store.directory();
    const outside = join(await tempDir(), 'secret.txt');
    await writeFile(outside, 'secret');
    const planted = join(dir, `${'a'.repeat(64)}.txt`);
    await symlink(outside, planted);
    for (const bad of [`${dir}/../${locator.slice(dir.length + 1)}`, `${dir}/sub/../${locator.slice(dir.length + 1)}`, outside, planted, dir]) {
      await expect(store.read(bad)).rejects.toMatchObject({ code: ErrorCode.FS_NOT_FOUND });
    }
  });

  it('is not fooled by a symlink swapped in for its directory: files are created and read through the directory it opened', async () => {
    const store = await fsStore();
    const { locator } = await store.save(sample, meta);
    const dir = await store.directory();
    // Someone moves the session directory away and puts a symlink to their own directory in its place.
    const theirs = await tempDir();
    const moved = `${dir}-moved`;
    await rename(dir, moved);
    await symlink(theirs, dir);
    // A file of theirs under the name of our spill, and an output saved after the swap.
    await writeFile(join(theirs, basename(locator)), 'planted');
    const second = await store.save('saved after the swap\n'.repeat(10), meta);
    expect(dirname(second.locator)).toBe(dir);
    // Nothing was written into their directory, and reads come from ours.
    expect(await readdir(theirs)).toEqual([basename(locator)]);
    expect(await readAllSpilled(store, locator)).toBe(sample);
    expect(await readAllSpilled(store, second.locator)).toBe('saved after the swap\n'.repeat(10));
    expect((await readdir(moved)).sort()).toEqual([basename(locator), basename(second.locator)].sort());
    // Removing the session empties our directory and leaves theirs alone.
    await store.remove();
    expect(await readdir(theirs)).toEqual([basename(locator)]);
    expect(await readFile(join(theirs, basename(locator)), 'utf8')).toBe('planted');
    expect(await readdir(moved)).toEqual([]);
  });

  it('never creates a spill through a symlink planted under a temp or spill name', async () => {
    const store = await fsStore();
    const dir = await store.directory();
    const outside = join(await tempDir(), 'victim.txt');
    await writeFile(outside, 'victim');
    const text = 'one more output\n';
    const name = `${createHash('sha256').update(text).digest('hex')}.txt`;
    await symlink(outside, join(dir, name));
    const { locator } = await store.save(text, meta);
    expect(await readFile(outside, 'utf8')).toBe('victim');
    expect(await readAllSpilled(store, locator)).toBe(text);
    expect((await lstat(locator)).isFile()).toBe(true);
  });

  it('stores identical output once', async () => {
    const store = await fsStore();
    const a = await store.save(sample, meta);
    const b = await store.save(sample, { callId: 'c2', toolName: 't' });
    expect(b.locator).toBe(a.locator);
    expect(await readdir(await store.directory())).toHaveLength(1);
  });

  it('removes its directory when the session is over', async () => {
    const store = await fsStore();
    await store.save(sample, meta);
    const dir = await store.directory();
    await store.remove();
    await expect(stat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('writes the text in slices: a surrogate pair or multi-byte character across a slice edge round-trips byte for byte', async () => {
    // The default slice is 1 MiB: 349,525 UTF-16 units (a unit is at most 3 bytes).
    const units = Math.floor(2 ** 20 / 3);
    const store = await fsStore();
    const names = new Set<string>();
    for (const lead of [units - 2, units - 1, units, units + 1]) {
      for (const straddler of ['😀', '中', 'é', '\uD800', '\uDC00', '😀😀']) {
        const text = 'x'.repeat(lead) + straddler + 'y'.repeat(units - 3) + '𝄞' + 'z\n'.repeat(5);
        const want = Buffer.from(text, 'utf8');
        const { locator } = await store.save(text, meta);
        const bytes = await readFile(locator);
        expect(bytes.equals(want)).toBe(true);
        const name = `${createHash('sha256').update(want).digest('hex')}.txt`;
        expect(locator.endsWith(name)).toBe(true);
        names.add(name);
      }
    }
    // A lone '\uD800' and a lone '\uDC00' are both written as U+FFFD: the same spill, stored once.
    expect((await readdir(await store.directory())).sort()).toEqual([...names].sort());
    expect(names.size).toBe(4 * 5);
  });

  it('any text, any slice size: the file holds exactly the text\'s UTF-8 bytes under their hash, and reads back whole', async () => {
    const store = await fsStore();
    const dir = await store.directory();
    await fc.assert(
      fc.asyncProperty(
        fc
          .array(fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('😀', '\uD83D', '\uDE00', '中', 'é', '\n')), { maxLength: 30 })
          .map((xs) => xs.join('')),
        fc.integer({ min: 1, max: 40 }),
        async (text, sliceBytes) => {
          const sliced = createFsSpillStore({ baseDir: dir, sliceBytes });
          stores.push(sliced);
          const { locator } = await sliced.save(text, meta);
          const want = Buffer.from(text, 'utf8'); // lone surrogates become U+FFFD, as in any UTF-8 writer
          expect((await readFile(locator)).equals(want)).toBe(true);
          expect(locator.endsWith(`${createHash('sha256').update(want).digest('hex')}.txt`)).toBe(true);
          expect(await readAllSpilled(sliced, locator)).toBe(want.toString('utf8'));
          // Saved again (deduplicated): the same locator, and no temp file left behind.
          expect((await sliced.save(text, meta)).locator).toBe(locator);
          expect(await readdir(await sliced.directory())).toEqual([locator.slice(locator.lastIndexOf('/') + 1)]);
          await sliced.remove();
        },
      ),
      { numRuns: 150 },
    );
  });

  it('stores an empty output as an empty file', async () => {
    const store = await fsStore();
    const { locator } = await store.save('', meta);
    expect((await stat(locator)).size).toBe(0);
    expect(await readAllSpilled(store, locator)).toBe('');
  });

  it('leaves no temp file behind when the write fails, and the store still works', async () => {
    // A "text" whose second slice cannot be read: the write stops half way.
    let slices = 0;
    const bad = {
      length: 100,
      charCodeAt: () => 0x41,
      slice: (from: number, to: number) => {
        if (++slices > 1) throw new Error('boom');
        return 'A'.repeat(to - from);
      },
    } as unknown as string;
    const sliced = createFsSpillStore({ baseDir: await tempDir(), sliceBytes: 30 });
    stores.push(sliced);
    await expect(sliced.save(bad, meta)).rejects.toThrow('boom');
    expect(await readdir(await sliced.directory())).toEqual([]);
    const { locator } = await sliced.save(sample, meta);
    expect(await readAllSpilled(sliced, locator)).toBe(sample);
  });
});
