// The browser bundle budget of the `dsh` entry (issue 13.4): src/index.ts with every dependency it
// pulls in, every export kept, built for the browser by Vite and by esbuild and gzipped, is at most 90 KB with each (issue 33), with
// zod in it once and re2js not at all (the RE2 policies are `dsh/policies`). The `dsh/react` entry
// without React is at most 10 KB (issue 22.4); `dsh/telemetry` adds at most 6 KB to `dsh` (issue 27). The same measures are the bench's `bundle` rows
// (bench/workloads/bundle.ts).
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { BUNDLE_BUDGET_BYTES, REACT_BUNDLE_BUDGET_BYTES, TELEMETRY_BUDGET_BYTES, buildBrowserChunk, runBundle, runReactBundle, zodCopiesIn } from '../../bench/workloads/bundle.js';

const root = process.cwd();
// Builds are CPU-bound and the machine is shared: this bound only catches a hang.
const HANG = 180_000;

describe('browser bundle of the `dsh` entry', () => {
  it(`is at most ${BUNDLE_BUDGET_BYTES / 1000} KB gzipped, with zod once and no re2js`, async () => {
    const r = await runBundle({ root });
    expect(r.zodCopies).toBe(1);
    expect(r.re2js).toBe(false);
    expect(r.gzipBytes).toBeGreaterThan(20_000); // a real build of the runtime, not an empty chunk
    expect(r.gzipBytes).toBeLessThanOrEqual(BUNDLE_BUDGET_BYTES);
    // The same entry through esbuild, held to the same budget (issue 33: both bundlers).
    expect(r.esbuildGzipBytes).toBeGreaterThan(20_000);
    expect(r.esbuildGzipBytes).toBeLessThanOrEqual(BUNDLE_BUDGET_BYTES);
    // A page with the session view ships the view on top of `dsh`: it is not in `dsh`'s figure.
    expect(r.withViewGzipBytes).toBeGreaterThan(r.gzipBytes);
  }, HANG);

  it(`\`dsh/telemetry\` (issue 27) adds at most ${TELEMETRY_BUDGET_BYTES / 1000} KB gzipped to \`dsh\`, with no Node built-in and no @opentelemetry code`, async () => {
    const names = ['invoke_agent', 'execute_tool', 'gen_ai.execute_tool.duration', 'gen_ai.client.operation.duration', 'gen_ai.tool.call.id'];
    const plain = await buildBrowserChunk(root);
    // `dsh` alone does not carry the projection: a page without telemetry does not ship it.
    for (const name of names) expect(plain).not.toContain(name);
    const both = await buildBrowserChunk(root, `import * as dsh from 'dsh'; import * as t from ${JSON.stringify(`${root}/src/telemetry.ts`)}; globalThis.dsh = { dsh, t };`);
    for (const name of names) expect(both).toContain(name);
    // Only types come from @opentelemetry/api (an optional peer): none of its code, and nothing of Node.
    expect(both).not.toMatch(/["'`]node:[a-z_/]+["'`]/);
    expect(both).not.toMatch(/@opentelemetry\//);
    const gz = (code: string) => gzipSync(code, { level: 9 }).length;
    expect(gz(both) - gz(plain)).toBeLessThanOrEqual(TELEMETRY_BUDGET_BYTES);
  }, HANG);

  it('the measure sees what it claims to: `dsh/policies` brings re2js, a second zod would count twice', async () => {
    const policies = await buildBrowserChunk(root, `import * as p from ${JSON.stringify(`${root}/src/policies.ts`)}; globalThis.p = p;`);
    expect(/RE2JS/.test(policies)).toBe(true);
    const code = await buildBrowserChunk(root);
    expect(zodCopiesIn(code + code)).toBe(2);
  }, HANG);

  it(`\`dsh/react\` without React is at most ${REACT_BUNDLE_BUDGET_BYTES / 1000} KB gzipped, and brings nothing of \`dsh\` with it`, async () => {
    const r = await runReactBundle(root);
    // The hooks are in it (their names are exports the chunk keeps), React is not, nor the runtime.
    expect(r.code).toMatch(/useSyncExternalStore/);
    expect(r.code).not.toMatch(/react\.production|__SECRET_INTERNALS|__CLIENT_INTERNALS/);
    expect(zodCopiesIn(r.code)).toBe(0);
    expect(r.code).not.toMatch(/xstate\.done\.actor|createActor/);
    expect(r.gzipBytes).toBeLessThanOrEqual(REACT_BUNDLE_BUDGET_BYTES);
  }, HANG);

  it('esbuild does not bundle zod locales other than English (dsh imports zod as a namespace)', async () => {
    // `import { z } from 'zod'` makes esbuild keep zod's whole namespace object, `z.locales` (every
    // locale, 264 KB minified) included; `import * as z from 'zod'` lets it keep only what is used.
    const { build } = await import('esbuild');
    const out = await build({ entryPoints: ['src/index.ts'], bundle: true, platform: 'browser', format: 'esm', minify: true, write: false, logLevel: 'silent', metafile: true });
    // Bytes each input put in the output (the inputs list also names files that were tree-shaken away).
    const inOutput = Object.values(out.metafile.outputs).flatMap((o) => Object.entries(o.inputs).filter(([, i]) => i.bytesInOutput > 0).map(([p]) => p));
    expect(inOutput.some((p) => p.includes('zod/v4/core/'))).toBe(true);
    const locales = inOutput.filter((p) => p.includes('zod/v4/locales/'));
    expect(locales.filter((p) => !p.endsWith('/en.js'))).toEqual([]);
  }, HANG);
});
