import { chmod, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinTools } from '../../../src/adapters/tools/builtinTools.js';
import { ErrorCode } from '../../../src/protocol/index.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { call, tempDir } from '../workspaceFixture.js';

async function setup(files: Record<string, string> = {}) {
  const root = await tempDir();
  for (const [name, text] of Object.entries(files)) await writeFile(join(root, name), text);
  const rt = createRuntime({ tools: [...createBuiltinTools({ root }).all] });
  return { rt, root, text: (name: string) => readFile(join(root, name), 'utf8') };
}

describe('fs/edit-intent and fs/write-intent', () => {
  it('refuses an edit after the file changed behind the session, and leaves the file as it was', async () => {
    const { rt, root, text } = await setup({ 'a.txt': 'one\ntwo\n' });
    expect((await call(rt, 'read', { path: 'a.txt' })).isError).toBe(false);
    await writeFile(join(root, 'a.txt'), 'one\nTWO\n');
    const r = await call(rt, 'edit', { path: 'a.txt', oldString: 'one', newString: 'uno' });
    expect(r.isError).toBe(true);
    expect(r.error?.code).toBe(ErrorCode.FS_STALE_VERSION);
    expect(r.content).toContain('changed since this session last read it');
    expect(await text('a.txt')).toBe('one\nTWO\n');
  });

  it('catches a same-size change that kept the old mtime (the hash decides)', async () => {
    const { rt, root, text } = await setup({ 'a.txt': 'abc\n' });
    await call(rt, 'read', { path: 'a.txt' });
    const before = await stat(join(root, 'a.txt'));
    await writeFile(join(root, 'a.txt'), 'xyz\n');
    await utimes(join(root, 'a.txt'), before.atime, before.mtime);
    const r = await call(rt, 'write', { path: 'a.txt', content: 'new\n' });
    expect(r.error?.code).toBe(ErrorCode.FS_STALE_VERSION);
    expect(await text('a.txt')).toBe('xyz\n');
  });

  it('lets the session edit again after re-reading, and after its own edits', async () => {
    const { rt, root, text } = await setup({ 'a.txt': 'one\ntwo\n' });
    await call(rt, 'read', { path: 'a.txt' });
    await writeFile(join(root, 'a.txt'), 'one\nTWO\n');
    expect((await call(rt, 'edit', { path: 'a.txt', oldString: 'one', newString: 'uno' })).error?.code).toBe(ErrorCode.FS_STALE_VERSION);
    await call(rt, 'read', { path: 'a.txt' });
    expect((await call(rt, 'edit', { path: 'a.txt', oldString: 'one', newString: 'uno' })).isError).toBe(false);
    expect((await call(rt, 'edit', { path: 'a.txt', oldString: 'TWO', newString: 'dos' })).isError).toBe(false);
    expect(await text('a.txt')).toBe('uno\ndos\n');
  });

  it('refuses to edit or overwrite a file this session never read, with a clear message', async () => {
    const { rt, text } = await setup({ 'a.txt': 'keep me\n' });
    const edit = await call(rt, 'edit', { path: 'a.txt', oldString: 'keep', newString: 'lose' });
    const write = await call(rt, 'write', { path: 'a.txt', content: 'lost\n' });
    for (const r of [edit, write]) {
      expect(r.error?.code).toBe(ErrorCode.FS_STALE_VERSION);
      expect(r.content).toMatch(/has not been read in this session; read it before (editing|overwriting) it/);
    }
    expect(await text('a.txt')).toBe('keep me\n');
  });

  it('does not share what one session read with another', async () => {
    const { root, text } = await setup({ 'a.txt': 'one\n' });
    const first = createRuntime({ tools: [...createBuiltinTools({ root }).all] });
    const second = createRuntime({ tools: [...createBuiltinTools({ root }).all] });
    await call(first, 'read', { path: 'a.txt' });
    expect((await call(second, 'edit', { path: 'a.txt', oldString: 'one', newString: 'two' })).error?.code).toBe(ErrorCode.FS_STALE_VERSION);
    expect(await text('a.txt')).toBe('one\n');
  });

  it('reports missing files as FS_NOT_FOUND', async () => {
    const { rt } = await setup();
    expect((await call(rt, 'read', { path: 'nope.txt' })).error?.code).toBe(ErrorCode.FS_NOT_FOUND);
    expect((await call(rt, 'edit', { path: 'nope.txt', oldString: 'a', newString: 'b' })).error?.code).toBe(ErrorCode.FS_NOT_FOUND);
  });

  it('treats a file deleted since it was read as stale for write', async () => {
    const { rt, root } = await setup({ 'a.txt': 'x\n' });
    await call(rt, 'read', { path: 'a.txt' });
    await rm(join(root, 'a.txt'));
    expect((await call(rt, 'write', { path: 'a.txt', content: 'y\n' })).error?.code).toBe(ErrorCode.FS_STALE_VERSION);
  });
});

describe('edit', () => {
  it('requires a unique match unless replaceAll, and replaces literally', async () => {
    const { rt, text } = await setup({ 'a.txt': 'x = 1; x = 1;\n' });
    await call(rt, 'read', { path: 'a.txt' });
    const ambiguous = await call(rt, 'edit', { path: 'a.txt', oldString: 'x = 1', newString: 'y = 2' });
    expect(ambiguous.error?.code).toBe(ErrorCode.TOOL_FAILED);
    expect(ambiguous.content).toContain('occurs 2 times');
    const missing = await call(rt, 'edit', { path: 'a.txt', oldString: 'zzz', newString: 'y' });
    expect(missing.content).toContain('not found');
    expect(await text('a.txt')).toBe('x = 1; x = 1;\n');
    const all = await call(rt, 'edit', { path: 'a.txt', oldString: 'x = 1', newString: "$& '$$'", replaceAll: true });
    expect(all.isError).toBe(false);
    expect(all.content).toContain('2 replacements');
    expect(await text('a.txt')).toBe("$& '$$'; $& '$$';\n");
  });

  it('refuses identical old and new strings as invalid arguments', async () => {
    const { rt } = await setup({ 'a.txt': 'a\n' });
    expect((await call(rt, 'edit', { path: 'a.txt', oldString: 'a', newString: 'a' })).error?.code).toBe(ErrorCode.INVALID_ARGS);
  });
});

describe('write', () => {
  it('replaces atomically: keeps the mode and leaves no temp file behind', async () => {
    const { rt, root, text } = await setup({ 'run.sh': 'echo old\n' });
    await chmod(join(root, 'run.sh'), 0o751);
    await call(rt, 'read', { path: 'run.sh' });
    const r = await call(rt, 'write', { path: 'run.sh', content: 'echo new\n' });
    expect(r.content).toContain('replaced run.sh');
    expect(await text('run.sh')).toBe('echo new\n');
    expect((await stat(join(root, 'run.sh'))).mode & 0o777).toBe(0o751);
    expect(await readdir(root)).toEqual(['run.sh']);
  });
});
