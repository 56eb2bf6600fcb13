import { execFileSync } from 'node:child_process';
import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinTools } from '../../../src/adapters/tools/builtinTools.js';
import { ErrorCode } from '../../../src/protocol/index.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { call, tempDir } from '../workspaceFixture.js';

/** A workspace beside an "outside" directory holding a secret, with a symlink leading out. */
async function setup() {
  const base = await tempDir();
  const root = join(base, 'ws');
  const outside = join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'secret\n');
  await writeFile(join(root, 'inside.txt'), 'inside\n');
  await symlink(join(outside, 'secret.txt'), join(root, 'escape.txt'));
  await symlink(outside, join(root, 'escape-dir'));
  await symlink(join(outside, 'not-yet.txt'), join(root, 'dangling.txt'));
  const tools = createBuiltinTools({ root });
  const rt = createRuntime({ tools: [...tools.all] });
  return { rt, root, outside };
}

const escapes = (outside: string) => ({
  'a ../ path': '../outside/secret.txt',
  'a ../ path that climbs back in and out': 'sub/../../outside/secret.txt',
  'an absolute path': join(outside, 'secret.txt'),
  'a symlink to a file outside': 'escape.txt',
  'a path through a symlinked directory': 'escape-dir/secret.txt',
  'a dangling symlink pointing outside': 'dangling.txt',
});

describe('workspace sandbox', () => {
  it('refuses every way out for read, write and edit, and leaves the outside untouched', async () => {
    const { rt, outside } = await setup();
    for (const [how, path] of Object.entries(escapes(outside))) {
      const results = {
        read: await call(rt, 'read', { path }),
        write: await call(rt, 'write', { path, content: 'pwned\n' }),
        edit: await call(rt, 'edit', { path, oldString: 'secret', newString: 'pwned' }),
      };
      for (const [tool, r] of Object.entries(results)) {
        expect({ how, tool, isError: r.isError, code: r.error?.code }).toEqual({ how, tool, isError: true, code: ErrorCode.FS_OUTSIDE_WORKSPACE });
        expect(r.content).not.toContain('secret\n');
      }
    }
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
    expect((await readdir(outside)).sort()).toEqual(['secret.txt']);
  });

  it('refuses grep and glob outside the workspace too', async () => {
    const { rt, outside } = await setup();
    expect((await call(rt, 'grep', { pattern: 'secret', path: '../outside' })).error?.code).toBe(ErrorCode.FS_OUTSIDE_WORKSPACE);
    expect((await call(rt, 'grep', { pattern: 'secret', path: outside })).error?.code).toBe(ErrorCode.FS_OUTSIDE_WORKSPACE);
    expect((await call(rt, 'glob', { pattern: '../outside/*' })).error?.code).toBe(ErrorCode.FS_OUTSIDE_WORKSPACE);
    const all = await call(rt, 'grep', { pattern: 'secret' });
    expect(all.isError).toBe(false);
    expect(all.content).toBe('no matches'); // symlinks are not followed out of the tree
  });

  it('accepts paths inside, absolute ones and symlinks that stay inside included', async () => {
    const { rt, root } = await setup();
    await symlink(join(root, 'inside.txt'), join(root, 'alias.txt'));
    expect((await call(rt, 'read', { path: join(root, 'inside.txt') })).content).toBe('inside\n');
    expect((await call(rt, 'read', { path: 'sub/../inside.txt' })).content).toBe('inside\n');
    expect((await call(rt, 'read', { path: 'alias.txt' })).content).toBe('inside\n');
    const edited = await call(rt, 'edit', { path: 'alias.txt', oldString: 'inside', newString: 'edited' });
    expect(edited.isError).toBe(false);
    expect(await readFile(join(root, 'inside.txt'), 'utf8')).toBe('edited\n');
    const created = await call(rt, 'write', { path: 'new/dir/file.txt', content: 'hi' });
    expect(created.isError).toBe(false);
    expect(await readFile(join(root, 'new/dir/file.txt'), 'utf8')).toBe('hi');
  });

  it('follows relative and chained symlinks that stay inside, and refuses a chain that ends outside', async () => {
    const { rt, root } = await setup();
    await mkdir(join(root, 'sub', 'deep'), { recursive: true });
    await writeFile(join(root, 'sub', 'deep', 'f.txt'), 'deep\n');
    await symlink('sub', join(root, 'rel-dir'));
    await symlink('rel-dir/deep', join(root, 'chain'));
    await symlink('../escape-dir', join(root, 'sub', 'back-out'));
    expect((await call(rt, 'read', { path: 'rel-dir/deep/f.txt' })).content).toBe('deep\n');
    expect((await call(rt, 'read', { path: 'chain/f.txt' })).content).toBe('deep\n');
    expect((await call(rt, 'grep', { pattern: 'deep', path: 'chain' })).content).toBe('sub/deep/f.txt:1:deep\n');
    expect((await call(rt, 'write', { path: 'chain/new.txt', content: 'n' })).content).toBe('created sub/deep/new.txt (1 bytes)');
    for (const path of ['sub/back-out/secret.txt', 'sub/back-out']) {
      expect((await call(rt, 'read', { path })).error?.code).toBe(ErrorCode.FS_OUTSIDE_WORKSPACE);
      expect((await call(rt, 'grep', { pattern: 'secret', path })).error?.code).toBe(ErrorCode.FS_OUTSIDE_WORKSPACE);
    }
  });

  it('neither hangs nor reads on a FIFO: read refuses it, grep skips it', async () => {
    const { rt, root } = await setup();
    execFileSync('mkfifo', [join(root, 'pipe')]);
    const r = await call(rt, 'read', { path: 'pipe' });
    expect({ code: r.error?.code, content: r.content }).toEqual({ code: ErrorCode.TOOL_FAILED, content: expect.stringContaining('not a regular file') });
    expect((await call(rt, 'grep', { pattern: 'x', path: 'pipe' })).content).toBe('no matches');
    expect((await call(rt, 'grep', { pattern: 'inside' })).content).toBe('inside.txt:1:inside\n');
  });
});
