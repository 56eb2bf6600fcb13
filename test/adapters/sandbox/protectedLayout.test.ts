// How the protected paths are held, from what exists just before a command (protectedLayout.ts).
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { protectedLayout, sweepProtected } from '../../../src/adapters/sandbox/protectedLayout.js';
import { protectedPaths } from '../../../src/adapters/sandbox/protectedPaths.js';
import { tempDir } from '../workspaceFixture.js';

describe('protectedLayout', () => {
  it('binds existing protected paths read-only, .git as a whole (no pins needed at the top level)', async () => {
    const root = await tempDir();
    await mkdir(join(root, '.dsh'));
    await mkdir(join(root, '.git', 'hooks'), { recursive: true });
    await writeFile(join(root, '.git', 'config'), '');
    await writeFile(join(root, 'dsh.config.json'), '{}');
    const l = await protectedLayout(root, protectedPaths({ root, userConfigDir: '/elsewhere/dsh' }));
    expect(l.pin).toEqual([]);
    expect([...l.readOnly].sort()).toEqual([join(root, '.dsh'), join(root, '.git'), join(root, 'dsh.config.json')].sort());
    expect(l.absent).toEqual([]);
  });

  it('a .git file (a worktree) is held read-only itself, and the sweep leaves it alone', async () => {
    const root = await tempDir();
    await mkdir(join(root, '.dsh'));
    await writeFile(join(root, '.git'), 'gitdir: /somewhere/.git/worktrees/x\n');
    const list = protectedPaths({ root });
    const l = await protectedLayout(root, list);
    expect(l.readOnly).toContain(join(root, '.git'));
    expect(l.pin).toEqual([]);
    expect(l.absent.map((p) => p.rule)).toEqual(['project-config']);
    expect(await sweepProtected(root, l.absent)).toEqual([]);
    expect(existsSync(join(root, '.git'))).toBe(true);
  });

  it('the sweep moves what was created at an absent path into .dsh/quarantine, a .git symlink included', async () => {
    const root = await tempDir();
    await mkdir(join(root, '.dsh'));
    const l = await protectedLayout(root, protectedPaths({ root }));
    expect(l.absent.map((p) => p.rule).sort()).toEqual(['git-dir', 'project-config']);
    await writeFile(join(root, 'dsh.config.json'), '{"plan":false}');
    const { symlink } = await import('node:fs/promises');
    await mkdir(join(root, 'fake', 'hooks'), { recursive: true });
    await symlink('fake', join(root, '.git'));
    const moved = await sweepProtected(root, l.absent, () => new Date('2026-12-01T00:00:00Z'));
    expect(moved.map((m) => [m.rule, m.path])).toEqual([
      ['project-config', 'dsh.config.json'],
      ['git-dir', '.git'],
    ]);
    expect(existsSync(join(root, 'dsh.config.json')) || existsSync(join(root, '.git'))).toBe(false);
    // The symlink was moved, not followed: what it pointed at is still there.
    expect(existsSync(join(root, 'fake', 'hooks'))).toBe(true);
    expect(readdirSync(join(root, '.dsh', 'quarantine'))).toHaveLength(2);
  });

  it('a git dir a .git file points at inside the workspace is held read-only, its parents pinned', async () => {
    const root = await tempDir();
    await mkdir(join(root, '.dsh'));
    await mkdir(join(root, 'meta', 'repo.git', 'hooks'), { recursive: true });
    await writeFile(join(root, '.git'), 'gitdir: meta/repo.git\n');
    const l = await protectedLayout(root, protectedPaths({ root, gitDirs: [join(root, 'meta', 'repo.git')] }));
    expect([...l.readOnly].sort()).toEqual([join(root, '.dsh'), join(root, '.git'), join(root, 'meta', 'repo.git')].sort());
    expect(l.pin).toEqual([join(root, 'meta')]);
  });
});
