// What keeps a hook's code out of the model's reach (hookIsolation.ts), and that the runner applies
// it: a real hook run sees no interpreter variable the config passed, and a PATH without
// workspace directories but with a shim directory outside it (pyenv, issue 37).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { homeModulePlaces, hookHiddenPaths, hookSearchPath, pythonCwdImport, toolWritableIn } from '../../../src/adapters/hooks/hookIsolation.js';
import { createHookRunner } from '../../../src/adapters/hooks/hookRunner.js';
import { probeBwrap } from '../../../src/adapters/sandbox/bwrapProbe.js';
import { createSandbox } from '../../../src/adapters/sandbox/sandbox.js';

const probe = await probeBwrap();
const skip = !probe.ok && process.env.CI === undefined;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const writable = toolWritableIn('/w', (p) => p === '/w/.dsh' || p.startsWith('/w/.dsh/'));

describe('hookIsolation', () => {
  it('keeps PATH entries tools cannot write, in order, and drops relative and empty ones', () => {
    expect(hookSearchPath('/w/node_modules/.bin:/home/u/.pyenv/shims::bin:/w/.dsh/bin:/usr/bin', writable)).toBe('/home/u/.pyenv/shims:/w/.dsh/bin:/usr/bin');
  });

  it('covers the tool-writable node_modules and package.json node would consult from the script up, and from the cwd', () => {
    const kinds: Record<string, 'dir' | 'file'> = { '/w/node_modules': 'dir', '/w/package.json': 'file', '/w/.dsh/hooks/node_modules': 'dir', '/node_modules': 'dir' };
    const h = hookHiddenPaths(['/w/.dsh/hooks/guard.mjs'], '/w', writable, (p) => kinds[p] ?? 'missing');
    expect(h).toEqual({ dirs: ['/w/node_modules'], files: ['/w/package.json'] });
  });

  it('a home the tools can write (a workspace at $HOME) loses its per-user module places', () => {
    const kinds: Record<string, 'dir'> = { '/w/.node_modules': 'dir' };
    expect(homeModulePlaces('/w', writable, (p) => kinds[p] ?? 'missing')).toEqual({ dirs: ['/w/.node_modules'], env: { PYTHONNOUSERSITE: '1' } });
    expect(homeModulePlaces('/home/u', writable, () => 'dir')).toEqual({ dirs: [], env: {} });
  });

  it('says why python -m and -c would import from the workspace root', () => {
    expect(pythonCwdImport(['python3', '-m', 'x'])).toMatch(/import path/);
    expect(pythonCwdImport(['/usr/bin/python3.12', '-Ic', 'x'])).toMatch(/import path/);
    expect(pythonCwdImport(['python3', '.dsh/hooks/x.py'])).toBeUndefined();
    expect(pythonCwdImport(['node', '-e', 'x'])).toBeUndefined();
  });
});

describe.skipIf(skip)('the hook runner applies it', () => {
  it('a hook gets no NODE_OPTIONS or PYTHONPATH even when passEnv names them, and its PATH has no workspace dir', async () => {
    const root = mkdtempSync(join('/var/tmp', 'dsh-hookiso-'));
    dirs.push(root);
    mkdirSync(join(root, 'bin'));
    const shims = mkdtempSync(join('/var/tmp', 'dsh-shims-'));
    dirs.push(shims);
    writeFileSync(join(shims, 'myshim'), '#!/bin/sh\necho shim-ran\n', { mode: 0o755 });
    const env = { PATH: `${join(root, 'bin')}:${shims}:/usr/bin:/bin`, HOME: root, NODE_OPTIONS: '--require ./evil.js', PYTHONPATH: root };
    const sandbox = createSandbox({ root, env, passEnv: ['NODE_OPTIONS', 'PYTHONPATH'] });
    const run = createHookRunner({ root, sandbox, env });
    const r = await run({ argv: ['/bin/sh', '-c', 'echo "PATH=$PATH"; echo "NO=${NODE_OPTIONS-unset}"; echo "PP=${PYTHONPATH-unset}"; myshim'], stdin: '', timeoutMs: 30_000 });
    expect(r).toMatchObject({ kind: 'exited', code: 0 });
    const out = (r as { stdout: string }).stdout;
    expect(out).toContain(`PATH=${shims}:/usr/bin:/bin\n`);
    expect(out).toContain('NO=unset\nPP=unset\n');
    expect(out).toContain('shim-ran');
    const viaShim = await run({ argv: ['myshim'], stdin: '', timeoutMs: 30_000 });
    expect(viaShim).toMatchObject({ kind: 'exited', code: 0, stdout: 'shim-ran\n' });
    await sandbox.dispose();
  }, 60_000);
});
