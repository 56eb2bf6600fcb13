// The git directories a `.git` file leads to (gitPointers.ts): protected as a whole (SPEC §10.7).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitCheckoutFiles, gitLocations, gitPointerDirs, parseCoreWorktree, parseGitdirFile } from '../../../src/adapters/sandbox/gitPointers.js';
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

  it('finds the .git files of submodules (nested, and named with a slash) and linked worktrees, from the git dir only', async () => {
    const root = await tempDir();
    const g = join(root, '.git');
    await mkdir(join(g, 'modules', 'sub', 'modules', 'inner'), { recursive: true });
    await mkdir(join(g, 'modules', 'group', 'name'), { recursive: true });
    await mkdir(join(g, 'worktrees', 'w'), { recursive: true });
    await writeFile(join(g, 'modules', 'sub', 'config'), '[core]\n\tbare = false\n\tworktree = ../../../sub\n[branch "x"]\n\tworktree = nope\n');
    await writeFile(join(g, 'modules', 'sub', 'modules', 'inner', 'config'), '[core]\n\tworktree = ../../../../../sub/inner\n');
    await writeFile(join(g, 'modules', 'group', 'name', 'config'), '[core]\n\tworktree = ../../../../group/name\n');
    await writeFile(join(g, 'worktrees', 'w', 'gitdir'), `${join(root, 'wt', '.git')}\n`);
    await mkdir(join(g, 'worktrees', 'out'), { recursive: true });
    await writeFile(join(g, 'worktrees', 'out', 'gitdir'), '/elsewhere/wt/.git\n');
    expect(gitCheckoutFiles(root, [g]).sort()).toEqual([join(root, 'group', 'name', '.git'), join(root, 'sub', '.git'), join(root, 'sub', 'inner', '.git'), join(root, 'wt', '.git')].sort());
    expect(gitLocations(root)).toEqual({ gitDirs: [], gitFiles: expect.arrayContaining([join(root, 'sub', '.git')]) });
    expect(parseCoreWorktree('[core]\n  worktree = "../x"\n')).toBe('../x');
    expect(parseCoreWorktree('[remote "o"]\n\tworktree = ../x\n')).toBeUndefined();
  });
});
