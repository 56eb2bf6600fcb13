/**
 * Issue 23 item 2 (SPEC §10.3): what governs the agent is out of its reach. `write` and `edit`
 * refuse to change `.dsh/`, `dsh.config.json`, the user-level config, `.git/hooks` and
 * `.git/config` with `FS_PROTECTED` naming the rule, whether the path is given directly, through a
 * symlink to a file or a directory, or through a directory that another process keeps exchanging
 * with a symlink to `.dsh`. Reading them works; the rest of `.git` stays writable.
 */
import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinTools } from '../../../src/adapters/tools/builtinTools.js';
import { ErrorCode, type ToolResult } from '../../../src/protocol/index.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { buildSwapper, startSwapper } from '../../security/swapHelper.js';
import { call, tempDir } from '../workspaceFixture.js';

const CONFIG = JSON.stringify({ bash: { deny: ['^rm\\s'] } }, null, 2);
const LOG_LINE = '{"seq":1,"type":"session/start"}\n';

/** Every entry below `dir`: type, size and a hash of a file's bytes. */
async function tree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const visit = async (rel: string) => {
    const st = await lstat(join(dir, rel));
    out[rel || '.'] = st.isFile() ? `f ${createHash('sha256').update(await readFile(join(dir, rel))).digest('hex')}` : st.isDirectory() ? 'd' : 'l';
    if (st.isDirectory()) for (const n of await readdir(join(dir, rel))) await visit(rel ? join(rel, n) : n);
  };
  await visit('');
  return out;
}

async function setup() {
  const base = await tempDir('dsh-protect-');
  const root = join(base, 'ws');
  const userConfigDir = join(root, 'home', '.config', 'dsh'); // a workspace that holds the user's home
  await mkdir(join(root, '.dsh', 'sessions'), { recursive: true });
  await mkdir(join(root, '.git', 'hooks'), { recursive: true });
  await mkdir(userConfigDir, { recursive: true });
  await writeFile(join(root, 'dsh.config.json'), CONFIG);
  await writeFile(join(root, '.dsh', 'sessions', 's1.jsonl'), LOG_LINE);
  await writeFile(join(root, '.git', 'config'), '[core]\n');
  await writeFile(join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  await writeFile(join(userConfigDir, 'config.json'), CONFIG);
  const rt = createRuntime({ tools: [...createBuiltinTools({ root, userConfigDir }).all] });
  return { base, root, userConfigDir, rt };
}

const expectProtected = (r: ToolResult, rule: RegExp) => {
  expect(r.isError, r.content).toBe(true);
  expect(r.error?.code).toBe(ErrorCode.FS_PROTECTED);
  expect(r.content).toMatch(rule);
};

describe('protected paths: the file tools cannot change what governs the agent', () => {
  it('write and edit refuse dsh.config.json, .dsh/, the user config and anything in .git, naming the rule; read still works', async () => {
    const { root, userConfigDir, rt } = await setup();
    const before = await tree(root);
    const targets: Array<[string, RegExp]> = [
      ['dsh.config.json', /rule project-config/],
      ['.dsh/sessions/s1.jsonl', /rule dsh-state/],
      ['home/.config/dsh/config.json', /rule user-config/],
      ['.git/config', /rule git-dir/],
    ];
    for (const [path, rule] of targets) {
      const read = await call(rt, 'read', { path });
      expect(read.isError, read.content).toBe(false); // reading is allowed
      expectProtected(await call(rt, 'write', { path, content: '{}' }), rule);
      expectProtected(await call(rt, 'edit', { path, oldString: read.content.includes('rm') ? 'rm' : 'core', newString: 'xx' }), rule);
    }
    // New files under a protected tree (and new directories on the way) are refused too.
    expectProtected(await call(rt, 'write', { path: '.dsh/sessions/forged.jsonl', content: LOG_LINE }), /rule dsh-state/);
    expectProtected(await call(rt, 'write', { path: '.dsh/new/deeper/x', content: 'x' }), /rule dsh-state/);
    expectProtected(await call(rt, 'write', { path: '.git/hooks/pre-commit', content: '#!/bin/sh\ntouch /tmp/pwned\n' }), /rule git-dir/);
    expectProtected(await call(rt, 'write', { path: 'home/.config/dsh/other.json', content: '{}' }), /rule user-config/);
    // Spellings that normalise to a protected path.
    expectProtected(await call(rt, 'write', { path: './x/../dsh.config.json', content: '{}' }), /rule project-config/);
    expectProtected(await call(rt, 'write', { path: join(root, '.dsh', 'lease'), content: '{}' }), /rule dsh-state/);
    expect(await tree(root)).toEqual(before);
    expect(await readFile(join(userConfigDir, 'config.json'), 'utf8')).toBe(CONFIG);
  });

  it('symlinks to a protected file or directory are refused, and nothing is created behind them', async () => {
    const { root, rt } = await setup();
    await symlink('dsh.config.json', join(root, 'innocent.json'));
    await symlink('.dsh/sessions', join(root, 'logs'));
    await symlink('.git/hooks', join(root, 'hooks'));
    await symlink('.dsh', join(root, 'state'));
    const before = await tree(root);
    expect((await call(rt, 'read', { path: 'innocent.json' })).isError).toBe(false);
    expectProtected(await call(rt, 'write', { path: 'innocent.json', content: '{}' }), /rule project-config/);
    expectProtected(await call(rt, 'edit', { path: 'innocent.json', oldString: 'rm', newString: 'xx' }), /rule project-config/);
    expectProtected(await call(rt, 'write', { path: 'logs/s2.jsonl', content: LOG_LINE }), /rule dsh-state/);
    expectProtected(await call(rt, 'write', { path: 'state/a/b/c', content: 'x' }), /rule dsh-state/);
    expectProtected(await call(rt, 'write', { path: 'hooks/post-checkout', content: '#!/bin/sh\n' }), /rule git-dir/);
    expect(await tree(root)).toEqual(before);
  });

  it('all of .git is protected: HEAD, commondir, a planted config, a submodule hooks, info/attributes (issue 31 item 3)', async () => {
    const { root, rt } = await setup();
    const before = await tree(root);
    expect((await call(rt, 'read', { path: '.git/HEAD' })).isError).toBe(false);
    for (const path of ['.git/HEAD', '.git/commondir', '.git/x/config', '.git/modules/sub/hooks/pre-commit', '.git/worktrees/w/config', '.git/info/attributes']) {
      expectProtected(await call(rt, 'write', { path, content: '[core]\n\tfsmonitor = touch /tmp/pwned\n' }), /rule git-dir/);
    }
    expect(await tree(root)).toEqual(before);
  });


  it('a directory exchanged again and again with a symlink to .dsh never lets a write land in .dsh', { timeout: 300_000 }, async () => {
    const { base, root, rt } = await setup();
    await mkdir(join(root, 'sub'));
    await writeFile(join(root, 'sub', 'x.txt'), 'token\n');
    await symlink(join(root, '.dsh'), join(root, 'swap'));
    const dshBefore = await tree(join(root, '.dsh'));
    const configBefore = await readFile(join(root, 'dsh.config.json'), 'utf8');
    const swapper = await startSwapper(await buildSwapper(await tempDir('dsh-swapper-')), join(root, 'sub'), join(root, 'swap'));
    const codes = new Map<string, number>();
    try {
      for (let i = 0; i < 300; i++) {
        const r = await call(rt, 'write', { path: `sub/new-${i}.txt`, content: `written ${i}\n` });
        const key = r.isError ? (r.error?.code ?? 'error') : 'ok';
        codes.set(key, (codes.get(key) ?? 0) + 1);
      }
    } finally {
      await swapper.stop();
    }
    expect(await tree(join(root, '.dsh'))).toEqual(dshBefore);
    expect(await readFile(join(root, 'dsh.config.json'), 'utf8')).toBe(configBefore);
    expect(Object.keys(await tree(base)).filter((p) => p.endsWith('.dsh-tmp'))).toEqual([]);
    // Only the two outcomes the race can give: written into the real directory, or refused.
    expect([...codes.keys()].filter((k) => k !== 'ok' && k !== ErrorCode.FS_PROTECTED && k !== ErrorCode.TOOL_FAILED)).toEqual([]);
    expect(codes.get('ok') ?? 0).toBeGreaterThan(0);
    console.log(`protected-path swap race: 300 writes, outcomes ${JSON.stringify(Object.fromEntries(codes))}`);
  });
});
