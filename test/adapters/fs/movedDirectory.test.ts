/**
 * Issue 23 item 5: a directory that was opened (by descriptor, verified inside the workspace) and
 * is then moved out of the workspace by another process. Every later open under it fails
 * `FS_OUTSIDE_WORKSPACE`: its files, its subdirectories (and theirs), and its listing; and the
 * walk that `grep` and `glob` list through (`walkFiles`) yields none of its children, whether the
 * move happens before the walk or in the middle of it, between the open and the listing.
 *
 * This pins `VerifiedDir.openDir` adopting a subdirectory under the verified parent's bound: a
 * subdirectory built from its own real path instead (bound = itself) is not checked, and
 * `sub/inner`, opened after `sub` left, would be readable outside the workspace.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { VerifiedDir } from '../../../src/adapters/fs/verifiedDir.js';
import { GitignoreRules, walkFiles } from '../../../src/adapters/tools/gitignore.js';
import { Workspace } from '../../../src/adapters/tools/workspace.js';
import { ErrorCode } from '../../../src/protocol/index.js';
import { ToolError } from '../../../src/runtime/toolError.js';
import { tempDir } from '../workspaceFixture.js';

/** `mv` in another process: the move is not this process's doing. */
const moveByAnotherProcess = (from: string, to: string) => promisify(execFile)('mv', [from, to]);

async function setup() {
  const base = await tempDir('dsh-moved-');
  const root = join(base, 'ws');
  const outside = join(base, 'outside');
  await mkdir(join(root, 'sub', 'inner', 'deeper'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(root, 'top.txt'), 'top\n');
  await writeFile(join(root, 'sub', 'a.txt'), 'a\n');
  await writeFile(join(root, 'sub', 'inner', 'b.txt'), 'b\n');
  await writeFile(join(root, 'sub', 'inner', 'deeper', 'c.txt'), 'c\n');
  const ws = new Workspace(root);
  return { root, outside, ws, realRoot: await ws.realRoot() };
}

const codeOf = async (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof ToolError ? e.code : (e as NodeJS.ErrnoException).code ?? String(e)),
  );

async function walked(start: VerifiedDir, startRel: string, rules: GitignoreRules): Promise<string[]> {
  const out: string[] = [];
  for await (const f of walkFiles(start, startRel, rules)) out.push(f.rel);
  return out;
}

describe('a directory moved out of the workspace after it was opened', () => {
  it('refuses every later open under it: files, subdirectories, their children, and its listing', async () => {
    const { root, outside, ws, realRoot } = await setup();
    const { dir: sub } = await ws.openDirectory('sub');
    // Opened while inside: this one stays open and is moved with its parent.
    const inner = await sub.openDir('inner');
    try {
      await moveByAnotherProcess(join(root, 'sub'), join(outside, 'sub'));
      expect(await codeOf(sub.openFile('a.txt', 0))).toBe(ErrorCode.FS_OUTSIDE_WORKSPACE);
      expect(await codeOf(sub.openDir('inner'))).toBe(ErrorCode.FS_OUTSIDE_WORKSPACE);
      expect(await codeOf(sub.readdir())).toBe(ErrorCode.FS_OUTSIDE_WORKSPACE);
      expect(await codeOf(inner.openFile('b.txt', 0))).toBe(ErrorCode.FS_OUTSIDE_WORKSPACE);
      expect(await codeOf(inner.openDir('deeper'))).toBe(ErrorCode.FS_OUTSIDE_WORKSPACE);
      expect(await codeOf(inner.readdir())).toBe(ErrorCode.FS_OUTSIDE_WORKSPACE);
      // The walk grep and glob list through yields none of its children.
      expect(await walked(sub, 'sub', new GitignoreRules(realRoot))).toEqual([]);
      expect(await walked(inner, 'sub/inner', new GitignoreRules(realRoot))).toEqual([]);
      // Nothing under the old name either: the workspace simply no longer has it.
      expect(await codeOf(ws.openDirectory('sub'))).toBe(ErrorCode.FS_NOT_FOUND);
    } finally {
      await inner.close();
      await sub.close();
    }
  });

  it('moved in the middle of a walk, between its open and its listing: the walk lists none of its children', async () => {
    const { root, outside, ws, realRoot } = await setup();
    // The walk reads a directory's .gitignore rules right after opening it and before listing it:
    // that is where the other process moves `sub` out.
    let moved = false;
    class MoveWhenOpened extends GitignoreRules {
      override async rulesOf(parts: readonly string[], dir?: VerifiedDir) {
        if (dir && parts.join('/') === 'sub' && !moved) {
          moved = true;
          await moveByAnotherProcess(join(root, 'sub'), join(outside, 'sub'));
        }
        return super.rulesOf(parts, dir);
      }
    }
    const { dir: start } = await ws.openDirectory('.');
    try {
      const rels = await walked(start, '.', new MoveWhenOpened(realRoot));
      expect(moved).toBe(true);
      expect(rels).toEqual(['top.txt']);
    } finally {
      await start.close();
    }
  });

  it('before the move, the same walk lists every file (the test above is not vacuous)', async () => {
    const { ws, realRoot } = await setup();
    const { dir: start } = await ws.openDirectory('.');
    try {
      expect(await walked(start, '.', new GitignoreRules(realRoot))).toEqual(['top.txt', 'sub/a.txt', 'sub/inner/b.txt', 'sub/inner/deeper/c.txt']);
    } finally {
      await start.close();
    }
  });
});
