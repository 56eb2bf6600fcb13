// dsh issue 31 item 3 (SPEC §10.7): the model plants code that the host's git runs later. A
// default-mode (workspace-write) bash call writes `.git/x/config` with `core.fsmonitor` and points
// `.git/commondir` at it; a submodule's hook, a worktree's config, `info/attributes` and the gitdir
// of a `.git` file are tried too. Every write fails, and the user's next plain `git status` on
// the host runs nothing (the planted fsmonitor would create a marker file). The control run
// makes the same plant from outside the sandbox and shows `git status` does run it.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { probeBwrap } from '../../src/adapters/sandbox/bwrapProbe.js';
import { removeWorlds, runBashCalls, worldDir } from './sandboxAttack.js';

const probe = await probeBwrap();
const skip = !probe.ok && process.env.CI === undefined;
if (skip) console.warn(`gitPlant.test.ts: skipped: no sandbox here (${probe.reason}); CI never skips it`);
afterAll(removeWorlds);

const hostEnv = (home: string) => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, GIT_CONFIG_NOSYSTEM: '1', LANG: 'C' });

function git(cwd: string, home: string, args: string[]): string {
  return execFileSync('git', args, { cwd, env: hostEnv(home), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A repository with one commit, in a workspace of its own; the marker the plant would create. */
async function repo(separate = false) {
  const base = await worldDir('dsh-gitplant-');
  const ws = join(base, 'ws');
  await mkdir(ws);
  if (separate) await mkdir(join(ws, 'meta'));
  if (separate) git(base, base, ['init', '-q', '--separate-git-dir', join(ws, 'meta', 'repo.git'), ws]);
  else git(base, base, ['init', '-q', ws]);
  git(ws, base, ['-c', 'user.email=a@b', '-c', 'user.name=n', 'commit', '-q', '--allow-empty', '-m', 'one']);
  return { base, ws, marker: join(base, 'fsmonitor-ran') };
}

/** The plant of the issue, as shell commands run inside the workspace (gitdir `g`). */
function plant(g: string, marker: string): string[] {
  const config = `[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = "touch ${marker};:"\\n`;
  return [
    `mkdir -p ${g}/x && printf '${config}' > ${g}/x/config && ln -s ../objects ${g}/x/objects && ln -s ../refs ${g}/x/refs && echo x > ${g}/commondir; echo "rc=$?"`,
    `printf '${config}' >> ${g}/config; echo "rc=$?"`,
    `mkdir -p ${g}/modules/sub/hooks && printf '#!/bin/sh\\ntouch ${marker}\\n' > ${g}/modules/sub/hooks/pre-commit; echo "rc=$?"`,
    `mkdir -p ${g}/worktrees/w && printf '${config}' > ${g}/worktrees/w/config; echo "rc=$?"`,
    `mkdir -p ${g}/info && echo '* filter=evil' > ${g}/info/attributes; echo "rc=$?"`,
    `mv ${g} moved-gitdir; echo "rc=$?"`,
  ];
}

/** A repository whose `sub` is a submodule (of a local repository), and an evil git dir beside. */
async function withSubmodule() {
  const base = await worldDir('dsh-gitplant-');
  const lib = join(base, 'lib');
  const ws = join(base, 'ws');
  git(base, base, ['init', '-q', lib]);
  git(lib, base, ['-c', 'user.email=a@b', '-c', 'user.name=n', 'commit', '-q', '--allow-empty', '-m', 'lib']);
  git(base, base, ['init', '-q', ws]);
  git(ws, base, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'sub']);
  git(ws, base, ['-c', 'user.email=a@b', '-c', 'user.name=n', 'commit', '-q', '-m', 'sub']);
  return { base, ws, marker: join(base, 'fsmonitor-ran') };
}

/** Copies the submodule's git dir to `evil/` with a planted fsmonitor, and points `sub/.git` at it. */
const submodulePlant = (marker: string) =>
  `cp -r .git/modules/sub evil && git config -f evil/config core.worktree ../sub && git config -f evil/config core.fsmonitor "touch ${marker};:" && echo "gitdir: ../evil" > sub/.git; echo "rc=$?"`;

describe.skipIf(skip)('a bash call cannot plant what the host git runs later', () => {
  it('control: a submodule whose .git file is rewritten from outside the sandbox runs the planted fsmonitor on the root `git status`', async () => {
    const { ws, base, marker } = await withSubmodule();
    execFileSync('/bin/bash', ['-c', submodulePlant(marker)], { cwd: ws });
    git(ws, base, ['status']);
    expect(existsSync(marker)).toBe(true);
  });

  it('workspace-write: a submodule checkout\'s .git file cannot be rewritten, so the root `git status` runs nothing', async () => {
    const { ws, base, marker } = await withSubmodule();
    const before = readFileSync(join(ws, 'sub', '.git'), 'utf8');
    const r = await runBashCalls({ mode: 'workspace-write', root: ws, env: hostEnv(base), commands: [submodulePlant(marker), 'rm -rf sub; mv sub sub-old; echo "rc=$?"'] });
    for (const [i, x] of r.entries()) expect(x.content, `plant ${i}`).not.toContain('rc=0');
    expect(readFileSync(join(ws, 'sub', '.git'), 'utf8')).toBe(before);
    git(ws, base, ['status']);
    expect(existsSync(marker)).toBe(false);
  }, 120_000);

  it('control: planted from outside the sandbox, the next `git status` runs the fsmonitor (the check below can fail)', async () => {
    const { ws, base, marker } = await repo();
    for (const cmd of plant('.git', marker).slice(0, 1)) execFileSync('/bin/bash', ['-c', cmd], { cwd: ws });
    git(ws, base, ['status']);
    expect(existsSync(marker)).toBe(true);
  });

  it('workspace-write: every plant in .git fails, and `git status` on the host runs nothing', async () => {
    const { ws, base, marker } = await repo();
    const r = await runBashCalls({ mode: 'workspace-write', root: ws, env: hostEnv(base), commands: plant('.git', marker) });
    for (const [i, x] of r.entries()) {
      expect(x.content, `plant ${i}`).toMatch(/Read-only file system|Device or resource busy/);
      expect(x.content, `plant ${i}`).not.toContain('rc=0');
    }
    for (const p of ['x', 'commondir', 'modules', 'worktrees', 'info/attributes']) expect(existsSync(join(ws, '.git', p)), p).toBe(false);
    expect(git(ws, base, ['status', '--porcelain'])).toBe('');
    expect(existsSync(marker)).toBe(false);
  }, 120_000);

  it('workspace-write: the git dir a .git file points at inside the workspace is held the same way, and the .git file too', async () => {
    const { ws, base, marker } = await repo(true);
    const r = await runBashCalls({
      mode: 'workspace-write',
      root: ws,
      env: hostEnv(base),
      commands: [...plant('meta/repo.git', marker), `echo "gitdir: elsewhere" > .git; echo "rc=$?"`],
    });
    for (const [i, x] of r.entries()) expect(x.content, `plant ${i}`).not.toContain('rc=0');
    for (const p of ['x', 'commondir', 'modules', 'worktrees', 'info/attributes']) expect(existsSync(join(ws, 'meta', 'repo.git', p)), p).toBe(false);
    // (`mv` across the mount falls back to a copy, which git never reads; the original stays.)
    git(ws, base, ['status']);
    expect(existsSync(marker)).toBe(false);
  }, 120_000);

  it('workspace-write: a .git a command creates (git init) is moved to .dsh/quarantine after the call, so the host git never reads it', async () => {
    const base = await worldDir('dsh-gitplant-');
    const ws = join(base, 'ws');
    await mkdir(ws);
    const marker = join(base, 'fsmonitor-ran');
    const r = await runBashCalls({
      mode: 'workspace-write',
      root: ws,
      env: hostEnv(base),
      commands: [`git init -q . && git config core.fsmonitor "touch ${marker};:" && echo initialised`],
    });
    expect(r[0]!.content).toContain('initialised');
    expect(r[0]!.content).toMatch(/\.git is protected \(git-dir\)/);
    expect(existsSync(join(ws, '.git'))).toBe(false);
    await writeFile(join(ws, 'f'), 'x');
    expect(() => git(ws, base, ['status'])).toThrow(/not a git repository/);
    expect(existsSync(marker)).toBe(false);
  }, 120_000);
});
