import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFsSpillStore, type FsSpillStore } from '../../../src/adapters/spill/fsSpillStore.js';
import { readAllSpilled } from '../../../src/runtime/spill/spillStore.js';
import { createBuiltinTools } from '../../../src/adapters/tools/builtinTools.js';
import { ErrorCode } from '../../../src/protocol/index.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { call, tempDir } from '../workspaceFixture.js';

const stores: FsSpillStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.remove()));
});

async function put(root: string, files: Record<string, string>) {
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, name)), { recursive: true });
    await writeFile(join(root, name), text);
  }
}

/** A session wired the way an application would: built-in tools plus the spill policy on one fs store. */
async function session(files: Record<string, string> = {}) {
  const root = await tempDir();
  await put(root, files);
  const store = createFsSpillStore({ baseDir: await tempDir() });
  stores.push(store);
  const tools = createBuiltinTools({ root, spillStore: store });
  const rt = createRuntime({ tools: [...tools.all], spillStore: store });
  return { rt, root, store };
}

type Spill = { locator: string; bytes: number; lines: number };

describe('grep', () => {
  it('spills a grep over a large tree; the preview shows its head and its tail, and the locator gives back every match', async () => {
    const files: Record<string, string> = {};
    for (let d = 0; d < 20; d++) {
      for (let f = 0; f < 30; f++) files[`d${String(d).padStart(2, '0')}/f${String(f).padStart(2, '0')}.txt`] = `filler\nneedle in d${d} f${f}\nmore filler\n`;
    }
    const { rt } = await session(files);
    const r = await call(rt, 'grep', { pattern: 'needle' });
    expect(r.isError).toBe(false);
    const spill = r.metadata.spill as Spill;
    expect(spill).toBeDefined();
    expect(spill.lines).toBe(600);
    expect(r.content).toContain('d00/f00.txt:2:needle in d0 f0');
    expect(r.content).toContain('d19/f29.txt:2:needle in d19 f29');
    expect(r.content).not.toContain('d10/f15.txt');
    expect(r.content).toContain(spill.locator);
    expect(rt.log.events().filter((e) => e.type === 'tool/spilled')).toHaveLength(1);

    // The model follows the hint: grep within the spilled output finds what the preview left out.
    const within = await call(rt, 'grep', { locator: spill.locator, pattern: 'd10/f15' });
    expect(within.content).toBe('316:d10/f15.txt:2:needle in d10 f15\n');
  });

  it('skips what .gitignore ignores (nested files, negations), binary files and .git', async () => {
    const { rt } = await session({
      '.gitignore': 'build/\n*.log\n!keep.log\n',
      'src/a.ts': 'const token = 1;\n',
      'src/.gitignore': 'generated.ts\n',
      'src/generated.ts': 'token\n',
      'build/out.js': 'token\n',
      'debug.log': 'token\n',
      'keep.log': 'token\n',
      '.git/config': 'token\n',
      'bin.dat': 'token\0\n',
    });
    const r = await call(rt, 'grep', { pattern: 'token' });
    expect(r.content).toBe('keep.log:1:token\nsrc/a.ts:1:const token = 1;\n');
    const glob = await call(rt, 'grep', { pattern: 'TOKEN', ignoreCase: true, glob: '*.ts' });
    expect(glob.content).toBe('src/a.ts:1:const token = 1;\n');
  });

  it('stops at maxResults and says so', async () => {
    const { rt } = await session({ 'a.txt': 'hit\n'.repeat(50) });
    const r = await call(rt, 'grep', { pattern: 'hit', maxResults: 10 });
    expect(r.content.split('\n').filter((l) => l.startsWith('a.txt:'))).toHaveLength(10);
    expect(r.content).toContain('stopped after 10 matching lines');
  });

  it('rejects an invalid regular expression as INVALID_ARGS', async () => {
    const { rt } = await session({ 'a.txt': 'x\n' });
    expect((await call(rt, 'grep', { pattern: '(' })).error?.code).toBe(ErrorCode.INVALID_ARGS);
  });
});

describe('glob', () => {
  it('lists matching files relative to the root, sorted, honouring .gitignore', async () => {
    const { rt } = await session({ '.gitignore': 'dist/\n', 'src/b.ts': '', 'src/a.ts': '', 'src/c.md': '', 'dist/x.ts': '', 'top.ts': '' });
    expect((await call(rt, 'glob', { pattern: '**/*.ts' })).content).toBe('src/a.ts\nsrc/b.ts\ntop.ts\n');
    expect((await call(rt, 'glob', { pattern: '*.ts', path: 'src' })).content).toBe('src/a.ts\nsrc/b.ts\n');
    expect((await call(rt, 'glob', { pattern: '**/*.ts', maxResults: 1 })).content).toBe('src/a.ts\n[glob: 2 more paths not shown; narrow the pattern or raise maxResults]\n');
  });

  it('runs in parallel with other safe calls', async () => {
    const { rt } = await session({ 'a.ts': '' });
    await call(rt, 'glob', { pattern: '*.ts' });
    expect(rt.log.events().find((e) => e.type === 'tool/call')).toMatchObject({ executionMode: 'parallel' });
  });
});

describe('read', () => {
  it('pages a file by lines and says where to continue', async () => {
    const text = Array.from({ length: 10 }, (_, i) => `l${i + 1}\n`).join('');
    const { rt } = await session({ 'a.txt': text });
    expect((await call(rt, 'read', { path: 'a.txt' })).content).toBe(text);
    const page = await call(rt, 'read', { path: 'a.txt', offset: 3, limit: 2 });
    expect(page.content).toBe('l3\nl4\n[read: lines 3–4 of 10 shown; continue with offset=5]');
    expect((await call(rt, 'read', { path: 'a.txt', offset: 11 })).content).toContain('past the end');
  });

  it('reads a spilled output through its locator, byte for byte', async () => {
    const { rt, store } = await session();
    const big = Array.from({ length: 3000 }, (_, i) => `row ${i} — ünïcödé 😀 ${'z'.repeat(i % 50)}\n`).join('');
    const { locator } = await store.save(big, { callId: 'x', toolName: 'bash' });
    // Page through with read, as a model would, following the continuation offsets.
    const pages: string[] = [];
    let offset = 1;
    for (let guard = 0; guard < 100; guard++) {
      const r = await call(rt, 'read', { locator, offset });
      expect(r.isError).toBe(false);
      expect(r.metadata.spill).toBeUndefined(); // a page fits inline: reading never spills again
      const v = r.value as { text: string; endLine: number; totalLines: number };
      pages.push(v.text);
      if (v.endLine >= v.totalLines) break;
      offset = v.endLine + 1;
    }
    expect(pages.join('')).toBe(big);
    expect(await readAllSpilled(store, locator)).toBe(big);
  });

  it('refuses a locator that is not from this session', async () => {
    const { rt, root } = await session({ 'a.txt': 'x\n' });
    const r = await call(rt, 'read', { locator: join(root, 'a.txt') });
    expect(r.error?.code).toBe(ErrorCode.FS_NOT_FOUND);
    expect((await call(rt, 'read', { locator: join(root, 'a.txt'), offset: 5, limit: 1 })).error?.code).toBe(ErrorCode.FS_NOT_FOUND);
    expect((await call(rt, 'grep', { locator: join(root, 'a.txt'), pattern: 'x' })).error?.code).toBe(ErrorCode.FS_NOT_FOUND);
    expect((await call(rt, 'read', { path: 'a.txt', locator: 'x' })).error?.code).toBe(ErrorCode.INVALID_ARGS);
  });
});
