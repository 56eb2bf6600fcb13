/**
 * Issue 10 item 1: a process inside the workspace keeps exchanging a real directory `sub` with a
 * symlink to a directory outside (renameat2 RENAME_EXCHANGE), while read, grep, glob, write and
 * edit run through the real built-in tools. Whatever the interleaving, no byte may be read from,
 * no name listed from, and no file created or changed outside the root.
 */
import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBuiltinTools } from '../../src/adapters/tools/builtinTools.js';
import { ErrorCode, type ToolResult } from '../../src/protocol/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { call, tempDir } from '../adapters/workspaceFixture.js';
import { buildSwapper, startSwapper } from './swapHelper.js';

/** Bounded by a call count, not a clock: 7 tool calls a round. */
const ROUNDS = 300;
/** Appears only in files outside the workspace (and in no tool argument). */
const SECRET = 'OUTSIDE-SECRET';
/** Names that exist only outside. */
const OUTSIDE_NAMES = ['outside-only-name.txt', 'deeper'];

/** Every entry below `dir` (the directory itself included): type, mode, size, mtime and a hash of a file's bytes. */
async function snapshotTree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const visit = async (rel: string) => {
    const abs = join(dir, rel);
    const st = await lstat(abs);
    const hash = st.isFile() ? createHash('sha256').update(await readFile(abs)).digest('hex') : '';
    out[rel || '.'] = `${st.isDirectory() ? 'd' : st.isFile() ? 'f' : 'o'} ${st.mode.toString(8)} ${st.size} ${st.mtimeMs} ${hash}`;
    if (st.isDirectory()) for (const name of await readdir(abs)) await visit(rel ? join(rel, name) : name);
  };
  await visit('');
  return out;
}

async function setup() {
  const base = await tempDir('dsh-race-');
  const root = join(base, 'ws');
  const outside = join(base, 'outside');
  await mkdir(join(root, 'sub', 'inner'), { recursive: true });
  await mkdir(join(outside, 'deeper'), { recursive: true });
  await writeFile(join(root, 'sub', 'x.txt'), 'token inside\n');
  await writeFile(join(root, 'sub', 'inner', 'z.txt'), 'token inner\n');
  await writeFile(join(outside, 'x.txt'), `token ${SECRET}\n`);
  await writeFile(join(outside, 'outside-only-name.txt'), `${SECRET}\n`);
  await writeFile(join(outside, 'deeper', 'x.txt'), `token ${SECRET} deeper\n`);
  // The other half of the exchange: a symlink inside the workspace leading out.
  await symlink(outside, join(root, 'swap'));
  const rt = createRuntime({ tools: [...createBuiltinTools({ root }).all] });
  return { base, root, outside, rt };
}

describe('workspace sandbox under a directory/symlink swap race', () => {
  it('reads, lists, creates and changes nothing outside the root, over thousands of calls', { timeout: 600_000 }, async () => {
    const { base, root, outside, rt } = await setup();
    const before = await snapshotTree(outside);
    const fdsBefore = (await readdir('/proc/self/fd')).length;
    const swapper = await startSwapper(await buildSwapper(await tempDir('dsh-swapper-')), join(root, 'sub'), join(root, 'swap'));
    const leaks: string[] = [];
    const codes = new Map<string, number>();
    const failures = new Set<string>();
    const check = (what: string, r: ToolResult) => {
      const key = r.isError ? (r.error?.code ?? 'error') : 'ok';
      codes.set(key, (codes.get(key) ?? 0) + 1);
      if (key === ErrorCode.TOOL_FAILED) failures.add(`${what}: ${r.content.replace(/\d+/g, 'N')}`);
      if (r.content.includes(SECRET) || OUTSIDE_NAMES.some((n) => r.content.includes(n))) leaks.push(`${what}: ${r.content.slice(0, 200)}`);
    };
    try {
      for (let i = 0; i < ROUNDS; i++) {
        const [read, grepSub, grepAll, globSub, globAll] = await Promise.all([
          call(rt, 'read', { path: 'sub/x.txt' }),
          call(rt, 'grep', { pattern: 'token|SECR[E]T', path: 'sub' }),
          call(rt, 'grep', { pattern: 'SECR[E]T|token' }),
          call(rt, 'glob', { pattern: 'sub/**' }),
          call(rt, 'glob', { pattern: '**/*' }),
        ]);
        check('read', read);
        check('grep sub', grepSub);
        check('grep', grepAll);
        check('glob sub/**', globSub);
        check('glob **/*', globAll);
        check('write', await call(rt, 'write', { path: `sub/new-${i}.txt`, content: `written ${i}\n` }));
        const upper = read.content.includes('TOKEN');
        check('edit', await call(rt, 'edit', { path: 'sub/x.txt', oldString: upper ? 'TOKEN' : 'token', newString: upper ? 'token' : 'TOKEN' }));
      }
    } finally {
      await swapper.stop();
    }
    expect(leaks).toEqual([]);
    // Every descriptor the tools opened was closed again, on every path the race drove them down.
    expect((await readdir('/proc/self/fd')).length - fdsBefore).toBeLessThan(20);
    expect(await snapshotTree(outside)).toEqual(before);
    // No temp file was left anywhere (outside or in the workspace).
    const tmp = Object.keys({ ...(await snapshotTree(base)) }).filter((p) => p.endsWith('.dsh-tmp'));
    expect(tmp).toEqual([]);
    // The race really ran: calls both got through and were refused for leading outside.
    expect(codes.get('ok') ?? 0).toBeGreaterThan(0);
    expect(codes.get(ErrorCode.FS_OUTSIDE_WORKSPACE) ?? 0).toBeGreaterThan(0);
    // Whatever the workspace holds now is only what the tools wrote into it.
    const inside = await readdir(join(root, (await lstat(join(root, 'sub'))).isDirectory() ? 'sub' : 'swap'));
    expect(inside.filter((n) => !/^new-\d+\.txt$/.test(n)).sort()).toEqual(['inner', 'x.txt']);
    console.log(`symlink swap race: ${ROUNDS * 7} calls, outcomes ${JSON.stringify(Object.fromEntries(codes))}; TOOL_FAILED: ${[...failures].join(' | ')}`);
  });
});
