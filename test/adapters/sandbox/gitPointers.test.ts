// The git directories a `.git` file leads to (gitPointers.ts): protected as a whole (SPEC §10.7).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitPointerDirs, parseGitdirFile } from '../../../src/adapters/sandbox/gitPointers.js';
import { tempDir } from '../workspaceFixture.js';

describe('gitPointerDirs', () => {
  it('reads the gitdir line', () => {
    expect(parseGitdirFile('gitdir: ../x/.git\n')).toBe('../x/.git');
    expect(parseGitdirFile('gitdir:/abs/p  \n')).toBe('/abs/p');
    expect(parseGitdirFile('nothing\n')).toBeUndefined();
  });

  it('follows a .git file to its gitdir and that dir’s commondir, keeping those inside the root', async () => {
    const root = await tempDir();
    await mkdir(join(root, 'meta', 'wt', 'x'), { recursive: true });
    await mkdir(join(root, 'meta', 'common'), { recursive: true });
    await writeFile(join(root, '.git'), 'gitdir: meta/wt/x\n');
    await writeFile(join(root, 'meta', 'wt', 'x', 'commondir'), '../../common\n');
    expect(gitPointerDirs(root)).toEqual([join(root, 'meta', 'wt', 'x'), join(root, 'meta', 'common')]);
  });

  it('is empty for a .git directory, no .git, or a gitdir outside the root', async () => {
    const a = await tempDir();
    await mkdir(join(a, '.git'));
    expect(gitPointerDirs(a)).toEqual([]);
    expect(gitPointerDirs(await tempDir())).toEqual([]);
    const b = await tempDir();
    await writeFile(join(b, '.git'), 'gitdir: /elsewhere/repo/.git/worktrees/b\n');
    expect(gitPointerDirs(b)).toEqual([]);
  });
});
