/**
 * Issue 10 item 2: `glob` must not list names through a symlink leading out of the workspace
 * (with `root/etc-link -> /etc`, `glob etc-link/*` listed /etc), whatever the pattern's shape.
 */
import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinTools } from '../../src/adapters/tools/builtinTools.js';
import { ErrorCode } from '../../src/protocol/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { call, tempDir } from '../adapters/workspaceFixture.js';

async function setup() {
  const base = await tempDir('dsh-glob-');
  const root = join(base, 'ws');
  const outside = join(base, 'outside');
  await mkdir(join(root, 'src', 'lib'), { recursive: true });
  await mkdir(join(outside, 'nested'), { recursive: true });
  await writeFile(join(root, 'src', 'a.ts'), 'a\n');
  await writeFile(join(root, 'src', 'lib', 'b.ts'), 'b\n');
  await writeFile(join(outside, 'outside-only.ts'), 'secret\n');
  await writeFile(join(outside, 'nested', 'deep-outside.ts'), 'secret\n');
  await symlink(outside, join(root, 'out-link'));
  await symlink('../outside', join(root, 'rel-out-link'));
  if (existsSync('/etc')) await symlink('/etc', join(root, 'etc-link'));
  await symlink(join(root, 'src'), join(root, 'src-alias')); // stays inside
  const rt = createRuntime({ tools: [...createBuiltinTools({ root }).all] });
  return { rt, root };
}

describe('glob through a symlink', () => {
  it('lists nothing through a symlink leading out of the workspace, whatever the pattern', async () => {
    const { rt } = await setup();
    const patterns = [
      'etc-link/*',
      'etc-link/**',
      'etc-link/**/*',
      'out-link/*',
      'out-link/**/*.ts',
      'rel-out-link/*',
      '*-link/*',
      '{out-link,etc-link}/*',
      '**/*',
      '**',
      '**/*.ts',
      '*/*',
    ];
    for (const pattern of patterns) {
      const r = await call(rt, 'glob', { pattern });
      expect({ pattern, isError: r.isError }).toEqual({ pattern, isError: false });
      // Only workspace files, and never anything below a symlink.
      const listed = r.content === 'no files match' ? [] : r.content.trim().split('\n');
      for (const p of listed) expect({ pattern, p }).toEqual({ pattern, p: expect.stringMatching(/^src\/(a\.ts|lib\/b\.ts)$/) });
    }
    expect((await call(rt, 'glob', { pattern: 'etc-link/*' })).content).toBe('no files match');
  });

  it('refuses a search directory that is a symlink leading out, and lists one that stays inside through its real path', async () => {
    const { rt } = await setup();
    for (const path of ['out-link', 'rel-out-link', ...(existsSync('/etc') ? ['etc-link'] : [])]) {
      const r = await call(rt, 'glob', { pattern: '*', path });
      expect({ path, code: r.error?.code }).toEqual({ path, code: ErrorCode.FS_OUTSIDE_WORKSPACE });
    }
    expect((await call(rt, 'glob', { pattern: '**/*.ts', path: 'src-alias' })).content).toBe('src/a.ts\nsrc/lib/b.ts\n');
    // grep walks the same way: nothing below a symlink is searched.
    expect((await call(rt, 'grep', { pattern: 'secret' })).content).toBe('no matches');
    expect((await call(rt, 'grep', { pattern: 'secret', glob: 'out-link/*' })).content).toBe('no matches');
  });

  it('keeps glob semantics: depth, dotfiles, braces, gitignore, path-relative matches', async () => {
    const { rt, root } = await setup();
    await writeFile(join(root, 'src', '.hidden.ts'), '');
    await writeFile(join(root, '.gitignore'), 'ignored/\n*.log\n');
    await mkdir(join(root, 'ignored'));
    await writeFile(join(root, 'ignored', 'x.ts'), '');
    await writeFile(join(root, 'src', 'debug.log'), '');
    expect((await call(rt, 'glob', { pattern: 'src/*.ts' })).content).toBe('src/a.ts\n');
    expect((await call(rt, 'glob', { pattern: 'src/**/*.ts' })).content).toBe('src/a.ts\nsrc/lib/b.ts\n');
    expect((await call(rt, 'glob', { pattern: '{src,ignored}/**/*.{ts,log}' })).content).toBe('src/a.ts\nsrc/lib/b.ts\n');
    expect((await call(rt, 'glob', { pattern: 'src/.*.ts' })).content).toBe('src/.hidden.ts\n');
    expect((await call(rt, 'glob', { pattern: '*.ts', path: 'src' })).content).toBe('src/a.ts\n');
    expect((await call(rt, 'glob', { pattern: './lib/*.ts', path: 'src' })).content).toBe('src/lib/b.ts\n');
    expect((await call(rt, 'glob', { pattern: 'nope/*.ts' })).content).toBe('no files match');
  });
});
