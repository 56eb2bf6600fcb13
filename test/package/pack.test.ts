// The package as a user gets it: `npm pack` (its prepack script builds dist/), installed offline
// into a fresh project (the dependencies come from the npm cache that `npm ci` filled), then used
// without tsx: the `dsh` binary, `import('dsh')`, `dsh/node`, `dsh/machines` from plain Node, the
// .d.ts under TypeScript, `dsh` bundled for the browser, and publint + arethetypeswrong on the
// tarball. Slow (a build and an install): every bound below only catches a hang.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linksOf } from '../docs/markdownFiles.js';

const root = join(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string };
const HANG = 600_000;

let work = '';
let tarball = '';
let app = '';
let installNote = '';

interface Run {
  code: number | null;
  out: string;
  err: string;
}

/** The environment without what `npm test` passes down (npm_* settings of this project, a tsx loader). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^npm_/i.test(k) && !/^npm_config_(cache|registry|userconfig|globalconfig)$/i.test(k)) continue;
    if (k === 'NODE_OPTIONS' || k === 'DSH_DEBUG' || k.startsWith('VITEST')) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

function run(file: string, args: string[], cwd: string, env = cleanEnv()): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, env, timeout: HANG, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, out: stdout, err: stderr });
    });
  });
}

const ok = (r: Run, what: string) => {
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}\n${r.err}\n${r.out}`);
  return r;
};

/** Runs an ES module (source text) with plain Node in the app: no loader, no tsx. */
/** The installed app's `contents` bundled for the browser by esbuild (nothing written; its metafile says what went in). */
async function browserBundle(contents: string, external: string[] = []) {
  const { build } = await import('esbuild');
  return build({ stdin: { contents, resolveDir: app, loader: 'js' }, absWorkingDir: app, bundle: true, platform: 'browser', format: 'esm', write: false, logLevel: 'silent', metafile: true, external });
}

function node(source: string): Promise<Run> {
  return run(process.execPath, ['--input-type=module', '-e', source], app);
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'dsh-pack-'));
  // prepack builds dist/ first.
  ok(await run('npm', ['pack', '--pack-destination', work, '--silent'], root), 'npm pack');
  tarball = join(work, `${pkg.name}-${pkg.version}.tgz`);
  expect(existsSync(tarball)).toBe(true);

  app = join(work, 'app');
  rmSync(app, { recursive: true, force: true });
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  // The app's lockfile starts from this project's: every package dsh needs is then known by
  // version, resolved URL and integrity, so `npm i --offline` takes it from the npm cache (which
  // `npm ci` filled) and asks no registry. The packages dsh does not need are pruned.
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
  const packages = { ...lock.packages, '': { name: 'app' } };
  writeFileSync(join(app, 'package-lock.json'), JSON.stringify({ name: 'app', lockfileVersion: 3, requires: true, packages }));
  const flags = ['--no-audit', '--no-fund', '--ignore-scripts'];
  const offline = await run('npm', ['install', '--offline', ...flags, tarball], app);
  if (offline.code !== 0) {
    // The cache lacks something (a cache other than the one `npm ci` used): fall back to the cache first, the registry for the rest.
    installNote = `offline install failed, installed with --prefer-offline:\n${offline.err}`;
    ok(await run('npm', ['install', '--prefer-offline', ...flags, tarball], app), 'npm install --prefer-offline');
  }
}, HANG);

// Removing the installed app (the MCP SDK brings a web server stack) can outlast the 10 s default.
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
}, HANG);

describe('the packed tarball', () => {
  it('ships the build, the bundled command, the diagrams (dsh inspect shows them), the README, the docs pages and package.json only: no sources, tests, bench or CI files', async () => {
    const files = ok(await run('tar', ['-tzf', tarball], work), 'tar').out.split('\n').filter(Boolean).map((f) => f.replace(/^package\//, ''));
    const diagrams = readdirSync(join(root, 'visualizations')).filter((f) => f.endsWith('.svg')).map((f) => `visualizations/${f}`);
    const docs = [...readdirSync(join(root, 'docs')).filter((f) => /\.(md|png)$/.test(f)), 'hooks.schema.json', 'protocol.schema.json'].map((f) => `docs/${f}`);
    expect(files.filter((f) => !/^dist\/(src|machines)\/.+\.(js|d\.ts)$/.test(f) && !/^dist\/cli\/[^/]+\.js$/.test(f)).sort()).toEqual(['README.md', ...docs, 'package.json', ...diagrams].sort());
    for (const entry of ['dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/node.js', 'dist/src/node.d.ts', 'dist/machines/index.js', 'dist/machines/index.d.ts', 'dist/src/protocol.js', 'dist/src/protocol.d.ts', 'dist/src/view.js', 'dist/src/view.d.ts', 'dist/src/inspection.js', 'dist/src/inspection.d.ts', 'dist/src/store.js', 'dist/src/store.d.ts', 'dist/src/policies.js', 'dist/src/policies.d.ts', 'dist/src/telemetry.js', 'dist/src/telemetry.d.ts', 'dist/src/react/index.js', 'dist/src/react/index.d.ts', 'dist/src/server/index.js', 'dist/src/server/index.d.ts', 'dist/src/client/index.js', 'dist/src/client/index.d.ts', 'dist/cli/bin.js']) {
      expect(files).toContain(entry);
    }
    expect(files.some((f) => /(^|\/)test\/|\.test\.|^bench\/|^\.ci\/|tsx/.test(f))).toBe(false);
  }, HANG);

  it('ships every file the README links to or shows (its images and docs pages read on npm as on GitHub)', async () => {
    const files = new Set(ok(await run('tar', ['-tzf', tarball], work), 'tar').out.split('\n').filter(Boolean).map((f) => f.replace(/^package\//, '')));
    const targets = linksOf('README.md').map((l) => l.target).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#')).map((t) => decodeURIComponent(t.split('#')[0]!).replace(/^\.\//, ''));
    expect(targets.length).toBeGreaterThan(0);
    expect(targets.filter((t) => !files.has(t))).toEqual([]);
  }, HANG);

  it('publint and arethetypeswrong (ESM-only profile) report nothing', async () => {
    const publint = ok(await run(process.execPath, [join(root, 'node_modules', 'publint', 'src', 'cli.js'), 'run', tarball, '--strict'], work), 'publint');
    expect(publint.out).toMatch(/All good!/);
    const attw = ok(await run(process.execPath, [join(root, 'node_modules', '@arethetypeswrong', 'cli', 'dist', 'index.js'), tarball, '--profile', 'esm-only', '--format', 'json'], work), 'attw');
    // The JSON lists every problem, also those the profile ignores: an ESM-only package cannot be
    // resolved by node10 nor required as CommonJS (node16-cjs); anything else is a finding.
    const report = JSON.parse(attw.out) as { problems: Record<string, Array<{ kind: string; entrypoint: string; resolutionKind?: string }>> };
    const found = Object.values(report.problems).flat();
    expect(found.filter((p) => p.resolutionKind !== 'node10' && p.resolutionKind !== 'node16-cjs')).toEqual([]);
  }, HANG);
});

describe('installed into a fresh project (offline, from the npm cache)', () => {
  it('installs with zod and xstate as the app\'s own single copies (peers), and without tsx', () => {
    if (installNote) console.warn(installNote);
    const top = readdirSync(join(app, 'node_modules'));
    expect(top).toEqual(expect.arrayContaining(['dsh', 'zod', 'xstate']));
    expect(top).not.toContain('tsx');
    expect(existsSync(join(app, 'node_modules', 'dsh', 'node_modules'))).toBe(false);
    const manifest = JSON.parse(readFileSync(join(app, 'node_modules', 'dsh', 'package.json'), 'utf8')) as { peerDependencies: Record<string, string>; peerDependenciesMeta?: Record<string, { optional?: boolean }>; dependencies: Record<string, string> };
    // zod and xstate are required peers; the model provider packages are optional ones (resolveModel loads them on demand).
    const providers = ['@ai-sdk/anthropic', '@ai-sdk/deepseek', '@ai-sdk/openai', '@ai-sdk/openai-compatible'];
    // So are pg and graphile-worker (the Postgres session store and queue load them on demand), and
    // react (only `dsh/react` imports it), and @opentelemetry/api (the runtime imports only its
    // types; `--otel` loads it with the SDK).
    const optional = [...providers, '@opentelemetry/api', 'graphile-worker', 'pg', 'react'].sort();
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual([...optional, 'xstate', 'zod'].sort());
    expect(Object.entries(manifest.peerDependenciesMeta ?? {}).filter(([, m]) => m.optional).map(([k]) => k).sort()).toEqual(optional);
    expect(manifest.dependencies).not.toHaveProperty('zod');
    // `dsh run --otel`'s SDK packages (issue 27): optional dependencies, pinned exactly, installed with dsh.
    const otelSdk = (manifest as { optionalDependencies?: Record<string, string> }).optionalDependencies ?? {};
    expect(Object.keys(otelSdk).sort()).toEqual(['@opentelemetry/exporter-metrics-otlp-http', '@opentelemetry/exporter-trace-otlp-http', '@opentelemetry/resources', '@opentelemetry/sdk-metrics', '@opentelemetry/sdk-trace-base']);
    for (const v of Object.values(otelSdk)) expect(v).toMatch(/^\d+\.\d+\.\d+$/);
    for (const name of [...Object.keys(otelSdk), '@opentelemetry/api']) expect(existsSync(join(app, 'node_modules', ...name.split('/'), 'package.json')), name).toBe(true);
  });

  it('npx dsh: --help, --version, the tour, a usage error (2) and a file error (1, one line)', async () => {
    const help = ok(await run('npx', ['--offline', 'dsh', '--help'], app), 'npx dsh --help');
    expect(help.out).toMatch(/^usage:\n {2}dsh run \[PROMPT\]/);
    expect(ok(await run('npx', ['--offline', 'dsh', '--version'], app), 'npx dsh --version').out).toBe(`${pkg.version}\n`);
    const bin = join(app, 'node_modules', '.bin', 'dsh');
    const log = join(work, 'session.jsonl');
    const tour = ok(await run(bin, ['tour', '--log', log], app), 'dsh tour');
    expect(tour.out).toMatch(/turn\/end turn-1: completed after 2 steps/);
    const printed = ok(await run(bin, ['log', log], app), 'dsh log');
    expect(printed.out).toMatch(/^ {3}1 turn\/start turn-1/);
    const usage = await run(bin, ['--bogus'], app);
    expect(usage.code).toBe(2);
    expect(usage.err).toMatch(/^dsh tour: Unknown option '--bogus'\n/);
    const missing = await run(bin, ['log', join(work, 'missing.jsonl')], app);
    expect(missing.code).toBe(1);
    expect(missing.err).toBe(`dsh log: ${join(work, 'missing.jsonl')}: no such file or directory\n`);
  }, HANG);

  it('npx dsh run "…" in the app: the embedded model, no key, no network, no terminal; the session log validates; dsh sessions lists it', async () => {
    const r = ok(await run('npx', ['--offline', 'dsh', 'run', '--model', 'embedded', 'look around'], app, cleanEnv({ OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' })), 'npx dsh run');
    expect(r.out).toMatch(/turn\/end turn-1: completed after 4 steps/);
    expect(r.out).toMatch(/tool\/result call-1-0 ✓/);
    const file = /session log: (\S+)/.exec(r.out)?.[1];
    expect(file && file.startsWith(join(app, '.dsh', 'sessions'))).toBe(true);
    // The hint names a command that works in the user's shell, where dsh is not on the PATH.
    expect(r.out).toContain(`(npx dsh log ${file}; npx dsh resume ${file})`);
    const printed = ok(await run(join(app, 'node_modules', '.bin', 'dsh'), ['log', file!, '--full'], app), 'dsh log --full');
    expect(printed.out).toMatch(/turn\/end turn-1: completed after 4 steps/);
    const list = ok(await run(join(app, 'node_modules', '.bin', 'dsh'), ['sessions'], app), 'dsh sessions');
    expect(list.out).toMatch(/ 1 +completed +look around$/m);
  }, HANG);

  it('dsh inspect serves its page from the package: the compiled page modules, the stylesheet, the diagrams (no tsx, no esbuild)', async () => {
    const bin = join(app, 'node_modules', '.bin', 'dsh');
    const log = join(work, 'inspect.jsonl');
    ok(await run(bin, ['tour', '--log', log], app), 'dsh tour');
    const child = spawn(bin, ['inspect', log], { cwd: app, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      const t0 = Date.now();
      while (!/open (http:\/\/\S+)/.test(out) && Date.now() - t0 < HANG) await new Promise((r) => setTimeout(r, 100));
      const url = new URL(/open (http:\/\/\S+)/.exec(out)![1]!);
      const page = await fetch(url);
      expect(page.status).toBe(200);
      for (const path of ['/assets/main.js', '/assets/model.js', '/assets/render.js', '/assets/timeline.js', '/machines/callStageNames.js', '/assets/style.css', '/diagrams/toolCall.svg', '/diagrams/turn.svg']) {
        const r = await fetch(new URL(path, url));
        expect(r.status, path).toBe(200);
        expect((await r.text()).length, path).toBeGreaterThan(100);
      }
      // The session over the wire protocol (the log file `inspect.jsonl` is session `inspect`).
      const stream = await fetch(new URL(`/api/sessions/inspect/events?token=${url.searchParams.get('t')}`, url));
      const reader = stream.body!.getReader();
      let text = '';
      while (!text.includes('"type":"session"')) text += new TextDecoder().decode((await reader.read()).value);
      expect(text).toMatch(/^retry: 1000\nevent: live\ndata: \{"type":"hello","protocol":1,"sessionId":"inspect"/);
      expect(text).toMatch(/^id: 1\nevent: log\ndata: \{"type":"turn\/start",.*"seq":1,/m);
      expect(text).toContain('data: {"type":"session","live":false}');
      await reader.cancel();
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, HANG);

  it('import("dsh"), "dsh/node", "dsh/machines", "dsh/policies" and the concern entries work from plain Node', async () => {
    const r = ok(
      await node(`
        import { z } from 'zod';
        const dsh = await import('dsh');
        const nodeEntry = await import('dsh/node');
        const machines = await import('dsh/machines');
        const policies = await import('dsh/policies');
        const protocol = await import('dsh/protocol');
        const view = await import('dsh/view');
        const inspection = await import('dsh/inspection');
        const store = await import('dsh/store');
        const read = dsh.defineTool({ name: 'read', description: 'r', input: z.object({ path: z.string() }), execute: async ({ path }) => 'contents of ' + path });
        const rt = dsh.createRuntime({ tools: [read] });
        const result = await rt.runCall({ callId: 'c1', toolName: 'read', input: '{"path":"a.txt"}' }).result;
        console.log(JSON.stringify({
          content: result.content,
          events: rt.log.events().map((e) => e.type),
          nodeHas: ['createBuiltinTools', 'createFsSpillStore', 'replayJsonlLog', 'createRuntime'].filter((k) => typeof nodeEntry[k] === 'function'),
          // The machines are dsh/machines' (dsh leaves them out); both entries share one copy of the modules.
          sameMachines: typeof machines.turnMachine === 'object' && !('turnMachine' in dsh) && machines.CALL_STAGE_NAMES === inspection.CALL_STAGE_NAMES,
          // Each concern entry's names are its own (not in dsh), and dsh/node re-exports the same bindings.
          entries: [
            [protocol, 'LogEventSchema'],
            [view, 'createSessionView'],
            [inspection, 'statelyInspectorOptions'],
            [store, 'createMemorySpillStore'],
          ].map(([entry, name]) => name in entry && !(name in dsh) && entry[name] === nodeEntry[name]),
          logParses: protocol.LogEventSchema.safeParse(rt.log.events()[0]).success,
          samePolicies: typeof policies.applyConfig === 'function' && policies.applyConfig === nodeEntry.applyConfig,
        }));
      `),
      'node import',
    );
    expect(JSON.parse(r.out)).toEqual({
      content: 'contents of a.txt',
      events: ['tool/call', 'tool/result'],
      nodeHas: ['createBuiltinTools', 'createFsSpillStore', 'replayJsonlLog', 'createRuntime'],
      sameMachines: true,
      entries: [true, true, true, true],
      logParses: true,
      samePolicies: true,
    });
  }, HANG);

  it('"dsh/server" serves a session and "dsh/client" follows and drives it, from plain Node over a real socket', async () => {
    const r = ok(
      await node(`
        import { createServer } from 'node:http';
        const dsh = await import('dsh');
        const { createApprovalInbox } = await import('dsh/view');
        const { createSessionHandler, hostRuntime, memorySessionDirectory, toNodeListener, WIRE_PROTOCOL_VERSION } = await import('dsh/server');
        const { connectSession } = await import('dsh/client');
        const sessions = memorySessionDirectory({
          host(id) {
            const approvals = createApprovalInbox();
            const runtime = dsh.createRuntime({ approval: approvals });
            return hostRuntime({ id, runtime, approvals, turnOptions: () => ({ model: dsh.scriptedModel([{ text: 'hello from the server' }]) }) });
          },
          newId: () => 's1',
        });
        await sessions.create();
        const handler = createSessionHandler({ sessions, authorize: (req) => req.headers.get('authorization') === 'Bearer t' || 'unauthenticated' });
        const server = createServer(toNodeListener(handler));
        await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
        const base = 'http://127.0.0.1:' + server.address().port + '/api/sessions/s1';
        const refused = (await fetch(base + '/events')).status;
        const session = connectSession(base, { headers: { authorization: 'Bearer t' } });
        const { turnId } = await session.startTurn('hi');
        const ended = () => session.getSnapshot().turns.find((t) => t.turnId === turnId && t.state === 'ended');
        while (!ended()) await new Promise((resolve) => setTimeout(resolve, 20));
        console.log(JSON.stringify({ refused, protocol: WIRE_PROTOCOL_VERSION, outcome: ended().outcome, answer: ended().answer, lastSeq: session.getSnapshot().lastSeq > 0 }));
        session.close();
        handler.close();
        server.closeAllConnections();
        server.close();
      `),
      'dsh/server and dsh/client',
    );
    expect(JSON.parse(r.out)).toEqual({ refused: 401, protocol: 1, outcome: 'completed', answer: 'hello from the server', lastSeq: true });
  }, HANG);

  it('"dsh/testing" explores an agent from a plain Node script (no test runner) and finds its planted bug', async () => {
    const r = ok(
      await node(`
        import { z } from 'zod';
        const dsh = await import('dsh');
        const { explore, scriptedModel } = await import('dsh/testing');
        const paid = new Map();
        const charge = (run) => dsh.defineTool({ name: 'charge', input: z.object({ order: z.number() }), execute: ({ order }) => { paid.set(run, (paid.get(run) ?? 0) + 1); return 'charged ' + order; } });
        const report = await explore({
          runtime: (world) => dsh.createRuntime({ ...world, tools: [charge(world.run)] }),
          turn: { input: 'pay', model: scriptedModel([{ toolCalls: [{ toolName: 'charge', input: { order: 7 } }] }, { text: 'paid' }]) },
          invariants: { 'charges once': (run) => (paid.get(run.index) ?? 0) <= 1 || 'charged twice' },
          maxRuns: 60,
          failureLogs: false,
        });
        console.log(JSON.stringify({ failures: report.failures.map((f) => f.invariant), deviations: report.failures[0]?.path.filter((c) => c !== 0).length }));
      `),
      'dsh/testing',
    );
    expect(JSON.parse(r.out)).toEqual({ failures: ['charges once'], deviations: 1 });
  }, HANG);

  it('"dsh/client" bundles for the browser with esbuild: no Node built-in, no server, no adapter, no CLI', async () => {
    const out = await browserBundle(`export * from 'dsh/client';`);
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs).toContain('node_modules/dsh/dist/src/client/connectSession.js');
    expect(inputs.filter((p) => p.startsWith('node:') || /dsh\/dist\/src\/(server|adapters|cli|runtime\/store)\//.test(p))).toEqual([]);
  }, HANG);

  it('the .d.ts type-check an app under NodeNext resolution', async () => {
    writeFileSync(
      join(app, 'app.ts'),
      `import { z } from 'zod';
import { createRuntime, defineTool } from 'dsh';
import type { ToolResult } from 'dsh/protocol';
import { createBuiltinTools } from 'dsh/node';
import { turnMachine } from 'dsh/machines';
const read = defineTool({ name: 'read', description: 'r', input: z.object({ path: z.string() }), execute: async ({ path }) => path.toUpperCase() });
const rt = createRuntime({ tools: [read, ...createBuiltinTools({ root: '.' }).all] });
const result: Promise<ToolResult> = rt.runCall({ callId: 'c1', toolName: 'read', input: '{}' }).result;
export { result, turnMachine };
// @ts-expect-error: the types are real, not any
defineTool({ name: 1 });
`,
    );
    // skipLibCheck off (issue 32 item 7): every .d.ts the app reaches through dsh is checked too;
    // @ai-sdk/provider's import json-schema types, which dsh's dependency @types/json-schema gives.
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, lib: ['ES2023', 'DOM'], typeRoots: [join(root, 'node_modules', '@types')], types: ['node'] },
        files: ['app.ts'],
      }),
    );
    ok(await run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], app), 'tsc');
  }, HANG);

  it('"dsh" bundles for the browser with esbuild: no Node built-in, no Node adapter, one zod', async () => {
    const out = await browserBundle(`import { createRuntime, scriptedModel } from 'dsh'; export const rt = createRuntime({}); export { scriptedModel };`);
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs.some((p) => p.startsWith('node_modules/dsh/dist/machines/'))).toBe(true);
    expect(inputs.filter((p) => p.startsWith('node:') || /dsh\/dist\/src\/(adapters\/(tools|spill\/fs|log)|cli)/.test(p))).toEqual([]);
    expect(inputs.filter((p) => /(^|\/)node_modules\/zod\//.test(p)).every((p) => p.startsWith('node_modules/zod/'))).toBe(true);
  }, HANG);

  it('"dsh/react" bundles for the browser with React left to the app: the hooks file alone, nothing else of dsh', async () => {
    const out = await browserBundle(`export * from 'dsh/react';`, ['react']);
    expect(Object.keys(out.metafile.inputs).filter((p) => p !== '<stdin>')).toEqual(['node_modules/dsh/dist/src/react/index.js']);
  }, HANG);
});
