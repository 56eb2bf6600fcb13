/**
 * Browser bundle (row key `bundle`, issue 13.4): the size of the `dsh` entry (src/index.ts) with
 * every dependency it pulls in, as a web app would ship it. A one-line entry imports `dsh` and
 * keeps every export (`globalThis.dsh = dsh`, so nothing is tree-shaken away); Vite (rolldown,
 * the repo's own vite) builds it for the browser, minified; the chunk is gzipped at level 9.
 * Also reported: how many copies of zod the chunk holds (zod's version object `{ major: 4, … }` is
 * its marker: a second copy, e.g. from a second path into zod, would repeat it) and whether re2js
 * is in it.
 * The same entry is also built with esbuild (minified, for the browser), since apps use both; and
 * `dsh` with `dsh/view` together, which is what a page that renders an in-page session ships (the
 * view is its own entry so that a page without it does not carry it).
 * Deterministic (a size, not a speed), so test/browser/bundleBudget.test.ts holds the budget.
 */
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';

/** The budget (issue 13.4: 100 KB; issue 33: 90 KB with Vite and esbuild): gzipped bytes of the `dsh` entry with its dependencies. */
export const BUNDLE_BUDGET_BYTES = 90_000;
/** The budget of the `dsh/react` entry without React itself (issue 22.4): gzipped bytes. */
export const REACT_BUNDLE_BUDGET_BYTES = 10_000;
/** What the `dsh/telemetry` entry (the OpenTelemetry projection) may add to `dsh` (issue 27): gzipped bytes. */
export const TELEMETRY_BUDGET_BYTES = 6_000;

export interface BundleResult {
  /** Gzipped (level 9) bytes of the minified chunk. */
  gzipBytes: number;
  /** Minified bytes. */
  minBytes: number;
  /** Copies of zod's core in the chunk (1 expected). */
  zodCopies: number;
  /** Whether re2js is in the chunk (it is the `dsh/policies` entry's, not `dsh`'s). */
  re2js: boolean;
  /** The same entry built with esbuild (minified, browser platform), gzipped bytes. */
  esbuildGzipBytes?: number;
  /** `dsh` and `dsh/view` in one page (Vite), gzipped bytes. */
  withViewGzipBytes?: number;
  /** Gzipped bytes each dependency adds (the chunk built again with that package left out). */
  byPackage: Record<string, number>;
  /** The `dsh/react` entry with React left out (a page brings its own), gzipped and minified bytes. */
  react?: { gzipBytes: number; minBytes: number };
}

/** The entry: `dsh` resolved to the sources, every export kept. */
const ENTRY_ID = '\0dsh-bundle-entry';
const ENTRY_CODE = "import * as dsh from 'dsh'; globalThis.dsh = dsh;";

const PACKAGES = ['zod', 'xstate', 're2js', '@ai-sdk/provider', 'any-signal'];

/** Counts the zod cores: each defines its version object (`{major:4,minor:…,patch:…}`) once. */
export function zodCopiesIn(code: string): number {
  return code.match(/major:\s*4,\s*minor:\s*\d+,\s*patch:\s*\d+/g)?.length ?? 0;
}

/** Builds `entryCode` (an ES module that imports `dsh`) with Vite and returns the minified chunk's code. */
export async function buildBrowserChunk(root: string, entryCode = ENTRY_CODE, external: (id: string) => boolean = () => false): Promise<string> {
  const { build } = await import('vite');
  const out = await build({
    configFile: false,
    root,
    logLevel: 'silent',
    resolve: { alias: [{ find: /^dsh$/, replacement: join(root, 'src', 'index.ts') }] },
    plugins: [
      {
        name: 'dsh-bundle-entry',
        resolveId: (id) => (id === ENTRY_ID ? id : undefined),
        load: (id) => (id === ENTRY_ID ? entryCode : undefined),
      },
    ],
    build: { write: false, minify: true, target: 'es2022', rollupOptions: { input: ENTRY_ID, external: (id) => external(id) } },
  });
  const outputs = Array.isArray(out) ? out : [out];
  const chunks = outputs.flatMap((o) => ('output' in o ? o.output : [])).filter((o) => o.type === 'chunk');
  return chunks.map((c) => (c.type === 'chunk' ? c.code : '')).join('\n');
}

const gz = (code: string) => gzipSync(code, { level: 9 }).length;

/** Builds `entryCode` (an ES module that imports `dsh`) with esbuild for the browser, minified, and returns its code. */
export async function buildEsbuildChunk(root: string, entryCode = ENTRY_CODE): Promise<string> {
  const { build } = await import('esbuild');
  const out = await build({
    stdin: { contents: entryCode, resolveDir: root, loader: 'js' },
    absWorkingDir: root,
    alias: { dsh: join(root, 'src', 'index.ts') },
    bundle: true,
    minify: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  return out.outputFiles.map((f) => f.text).join('\n');
}

/** A page with the in-page session view: `dsh` and `dsh/view`, every export of both kept. */
export function withViewEntry(root: string): string {
  return `import * as dsh from 'dsh'; import * as view from ${JSON.stringify(join(root, 'src', 'view.ts'))}; globalThis.dsh = dsh; globalThis.dshView = view;`;
}

/** React and its subpaths: what a page that uses `dsh/react` already ships. */
const isReact = (id: string) => id === 'react' || id.startsWith('react/') || id === 'react-dom' || id.startsWith('react-dom/');

/**
 * The `dsh/react` entry (src/react/index.ts), every export kept, with React external: what the
 * entry adds to a page that has React. Everything else it imports is in the chunk (types only from
 * the view, so nothing of `dsh` should be).
 */
export async function runReactBundle(root: string): Promise<{ gzipBytes: number; minBytes: number; code: string }> {
  const entry = `import * as r from ${JSON.stringify(join(root, 'src', 'react', 'index.ts'))}; globalThis.dshReact = r;`;
  const code = await buildBrowserChunk(root, entry, isReact);
  return { gzipBytes: gz(code), minBytes: code.length, code };
}

/** Measures the `dsh` entry; `detail` also rebuilds it once per dependency to attribute the bytes. */
export async function runBundle(options: { root: string; detail?: boolean }): Promise<BundleResult> {
  const code = await buildBrowserChunk(options.root);
  const gzipBytes = gz(code);
  const byPackage: Record<string, number> = {};
  if (options.detail) {
    for (const p of PACKAGES) {
      const without = await buildBrowserChunk(options.root, ENTRY_CODE, (id) => id === p || id.startsWith(`${p}/`));
      byPackage[p] = gzipBytes - gz(without);
    }
  }
  const react = await runReactBundle(options.root);
  const esbuildGzipBytes = gz(await buildEsbuildChunk(options.root));
  const withViewGzipBytes = gz(await buildBrowserChunk(options.root, withViewEntry(options.root)));
  return { gzipBytes, minBytes: code.length, esbuildGzipBytes, withViewGzipBytes, zodCopies: zodCopiesIn(code), re2js: /RE2JS/.test(code), byPackage, react: { gzipBytes: react.gzipBytes, minBytes: react.minBytes } };
}
