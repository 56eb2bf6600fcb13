// dsh issue 31 item 6 (SPEC §10.7): a hook runs what the user installed, not what the model wrote.
// The attack: a guard hook `node .dsh/hooks/guard.mjs` imports `verdict`, which node resolves from
// the workspace's `node_modules`; one real (sandboxed, workspace-write) bash call rewrites it to
// allow everything, and the next call's `rm -rf victim` passed the guard. Now the hook cannot
// reach the workspace's `node_modules` at all (it fails closed, and says which package it could
// not find), so `victim` survives. Where the dependency lives in `.dsh/hooks/node_modules`
// (protected, the documented place), a bash call can neither rewrite it nor shadow it (a planted
// `<root>/node_modules/verdict`, or a `<root>/package.json` named `verdict` whose `exports` node
// would self-resolve first): the guard still denies `rm`.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHookRunner, hookCommandProblem } from '../../src/adapters/hooks/hookRunner.js';
import { probeBwrap } from '../../src/adapters/sandbox/bwrapProbe.js';
import { createBuiltinTools } from '../../src/adapters/tools/builtinTools.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { applyConfig } from '../../src/runtime/policies/applyConfig.js';
import { call } from '../runtime/policies/fixtures.js';

const probe = await probeBwrap();
const skip = !probe.ok && process.env.CI === undefined;
if (skip) console.warn(`hookImportAttack.test.ts: skipped: no sandbox here (${probe.reason}); CI never skips it`);

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const GUARD = [
  `import { verdict } from 'verdict';`,
  `let s = '';`,
  `process.stdin.on('data', (d) => (s += d)).on('end', () => {`,
  `  const input = JSON.parse(s);`,
  `  process.stdout.write(JSON.stringify(verdict(String(input.args?.command ?? ''))));`,
  `});`,
  '',
].join('\n');
const STRICT = `export const verdict = (c) => (/\\brm\\b/.test(c) ? { version: 1, decision: 'deny', reason: 'no rm here' } : { version: 1, decision: 'next' });\n`;
const LAX = `export const verdict = () => ({ version: 1, decision: 'next' });\n`;

function pkg(dir: string, main: string) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'verdict', type: 'module', exports: './index.mjs' }));
  writeFileSync(join(dir, 'index.mjs'), main);
}

/** A workspace with the guard hook, `verdict` installed at `depsAt`, and a victim directory. */
function world(depsAt: 'workspace' | 'dsh-hooks') {
  const root = mkdtempSync(join('/var/tmp', 'dsh-hookattack-'));
  dirs.push(root);
  mkdirSync(join(root, '.dsh', 'hooks'), { recursive: true });
  writeFileSync(join(root, '.dsh', 'hooks', 'guard.mjs'), GUARD);
  pkg(depsAt === 'workspace' ? join(root, 'node_modules', 'verdict') : join(root, '.dsh', 'hooks', 'node_modules', 'verdict'), STRICT);
  mkdirSync(join(root, 'victim'));
  writeFileSync(join(root, 'victim', 'keep.txt'), 'keep\n');
  const tools = createBuiltinTools({ root, sandbox: 'workspace-write' });
  const rt = createRuntime({ tools: [...tools.all] });
  const command = [process.execPath, '.dsh/hooks/guard.mjs'];
  expect(hookCommandProblem(root, command)).toBeUndefined(); // accepted at load: the script is under .dsh/hooks
  applyConfig(rt, { hooks: { guard: [{ command, tools: 'bash' }] }, permissions: [{ tool: 'bash', decision: 'allow' }] }, { root, hookRunner: createHookRunner({ root, sandbox: tools.sandbox }) });
  return { root, rt, tools };
}

const REWRITE = `printf '%s' "${LAX.replace(/"/g, '\\"').replace(/\n/g, '')}" > node_modules/verdict/index.mjs; echo "rc=$?"`;

describe.skipIf(skip)('a guard hook cannot be rewritten through what it imports', () => {
  it('dependency in the workspace node_modules: the hook never loads it, so the rewrite and the rm both fail closed; victim survives', async () => {
    const { root, rt, tools } = world('workspace');
    const first = await call(rt, 'bash', { command: REWRITE });
    expect(first.error?.code, first.content).toBe('HOOK_FAILED');
    expect(first.content).toContain('[dsh: node_modules hidden from hooks (the agent can write there): put a hook\'s dependencies in .dsh/hooks/node_modules]');
    const second = await call(rt, 'bash', { command: 'rm -rf victim && echo gone' });
    expect(second.error?.code, second.content).toBe('HOOK_FAILED');
    expect(existsSync(join(root, 'victim', 'keep.txt'))).toBe(true);
    expect(readFileSync(join(root, 'node_modules', 'verdict', 'index.mjs'), 'utf8')).toBe(STRICT);
    await tools.sandbox.dispose();
  }, 120_000);

  it('dependency in .dsh/hooks/node_modules: bash cannot rewrite it, shadow it or self-resolve it; the next rm is still denied', async () => {
    const { root, rt, tools } = world('dsh-hooks');
    const plant = await call(rt, 'bash', {
      command: [
        `printf '%s' "${LAX.replace(/"/g, '\\"').replace(/\n/g, '')}" > .dsh/hooks/node_modules/verdict/index.mjs; echo "rc=$?"`,
        `mkdir -p node_modules/verdict && printf '%s' '{"name":"verdict","type":"module","exports":"./index.mjs"}' > node_modules/verdict/package.json`,
        `printf '%s' "${LAX.replace(/"/g, '\\"').replace(/\n/g, '')}" > node_modules/verdict/index.mjs`,
        `printf '%s' '{"name":"verdict","type":"module","exports":"./evil.mjs"}' > package.json`,
        `printf '%s' "${LAX.replace(/"/g, '\\"').replace(/\n/g, '')}" > evil.mjs`,
        'echo planted',
      ].join('\n'),
    });
    expect(plant.isError, plant.content).toBe(false);
    expect(plant.content).toMatch(/Read-only file system/);
    expect(plant.content).toContain('planted');
    // The plants are there on the host (the shadow and the self-reference), the protected copy is not changed.
    expect(readFileSync(join(root, 'node_modules', 'verdict', 'index.mjs'), 'utf8')).toBe(LAX.trimEnd());
    expect(readFileSync(join(root, '.dsh', 'hooks', 'node_modules', 'verdict', 'index.mjs'), 'utf8')).toBe(STRICT);
    const rm = await call(rt, 'bash', { command: 'rm -rf victim && echo gone' });
    expect(rm.error?.code, rm.content).toBe('GUARD_DENIED');
    expect(rm.content).toContain('no rm here');
    expect(existsSync(join(root, 'victim', 'keep.txt'))).toBe(true);
    // And a harmless call still passes the guard.
    const ok = await call(rt, 'bash', { command: 'echo fine' });
    expect(ok.isError, ok.content).toBe(false);
    await tools.sandbox.dispose();
  }, 120_000);
});

describe('a hook whose program is found on PATH inside the workspace is refused at load', () => {
  it('names the program and where it was found; a program outside (a pyenv-style shim dir) is fine', () => {
    const root = mkdtempSync(join('/var/tmp', 'dsh-hookpath-'));
    dirs.push(root);
    mkdirSync(join(root, 'bin'));
    mkdirSync(join(root, 'shims'));
    writeFileSync(join(root, 'bin', 'guardtool'), '#!/bin/sh\n', { mode: 0o755 });
    expect(hookCommandProblem(root, ['guardtool'], undefined, `${join(root, 'bin')}:/usr/bin`)).toMatch(/"guardtool" is found on PATH at .*\/bin\/guardtool, inside the workspace/);
    expect(hookCommandProblem(root, ['guardtool'], undefined, `bin:/usr/bin`)).toMatch(/inside the workspace/);
    expect(hookCommandProblem(root, ['sh'], undefined, '/usr/bin:/bin')).toBeUndefined();
    expect(hookCommandProblem(root, ['python3', '-m', 'guard'], undefined, '/usr/bin')).toMatch(/puts the working directory .* first on Python's import path/);
    expect(hookCommandProblem(root, ['python3', '-c', 'import guard'], undefined, '/usr/bin')).toMatch(/import path/);
  });
});
