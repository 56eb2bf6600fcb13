import { readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFsSpillStore, type FsSpillStore } from '../../../src/adapters/spill/fsSpillStore.js';
import { createMemorySpillStore } from '../../../src/runtime/memorySpillStore.js';
import { readAllSpilled, type SpillStore } from '../../../src/runtime/spillStore.js';
import { ErrorCode } from '../../../src/protocol/index.js';
import { tempDir } from '../workspaceFixture.js';

const stores: FsSpillStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.remove()));
});

async function fsStore(): Promise<FsSpillStore> {
  const s = createFsSpillStore({ baseDir: await tempDir() });
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
});
