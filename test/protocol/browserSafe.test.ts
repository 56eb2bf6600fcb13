import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// Layers that must run in a browser tab: no Node built-ins, no Node-only adapters.
const PURE_DIRS = ['machines', 'src/protocol', 'src/runtime', 'src/view', 'src/react', 'src/client'];
const NODE_IMPORT = /from\s+['"](node:[^'"]+|fs|path|os|child_process|worker_threads|net|http|https|crypto|stream|url|util)['"]/;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('browser safety', () => {
  for (const dir of PURE_DIRS) {
    it(`${dir} imports no Node module and no Node-only adapter`, () => {
      const offenders = files(dir).filter((f) => {
        const src = readFileSync(f, 'utf8');
        return NODE_IMPORT.test(src) || /from\s+['"][^'"]*adapters\/(tools|spill\/fs|log\/jsonl)/.test(src) || /\bprocess\.(env|cwd|exit)/.test(src);
      });
      expect(offenders).toEqual([]);
    });
  }
});

describe('browser bundle', () => {
  it('the `dsh` entry bundles for the browser with no Node built-in', async () => {
    const { build } = await import('esbuild');
    const out = await build({
      entryPoints: ['src/index.ts'],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      logLevel: 'silent',
      metafile: true,
    });
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs.some((p) => p.startsWith('machines/'))).toBe(true);
    expect(inputs.filter((p) => p.startsWith('node:') || /src\/adapters\/(tools|spill\/fs|log)/.test(p))).toEqual([]);
  });
});

describe('the wire client', () => {
  it('`dsh/client` bundles for the browser with no Node built-in and no server code', async () => {
    const { build } = await import('esbuild');
    const out = await build({ entryPoints: ['src/client/index.ts'], bundle: true, platform: 'browser', format: 'esm', write: false, logLevel: 'silent', metafile: true });
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs.filter((p) => p.startsWith('node:') || p.startsWith('src/server/') || p.startsWith('src/adapters/'))).toEqual([]);
  });
});
