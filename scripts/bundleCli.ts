/**
 * The `dsh` command as it ships (package.json `bin`: dist/cli/bin.js): the compiled CLI entry,
 * dist/src/cli/bin.js, bundled by esbuild with code splitting into dist/cli/ (`npm run build` runs
 * this after tsc; the bench bundles its own build the same way).
 *
 * Why: Node 20 loads ES modules one file at a time (resolve, read, compile, link each), and
 * `dsh run` reached its first model request through about 280 of them (dsh's own ≈ 180, zod's 95,
 * most of those its locales); measured here, that was most of its start (issue 33: ≤ 400 ms).
 * The bundle is a handful of files; the lazily imported commands stay lazy (a chunk each).
 *
 * What goes in: dsh's own code and the small runtime packages every command needs
 * ({@link CLI_INLINED}). The command is a program of its own: its copies of zod and xstate never
 * meet an app's (the CLI takes no schema or machine from user code; its config is JSON, MCP tools
 * arrive as JSON Schema), while the library entries (`dsh`, `dsh/node`, …) stay per-file modules
 * that import the app's zod and xstate, its peers. Everything else stays an import of the
 * installed package: the optional peers (model providers, OpenTelemetry, pg, graphile-worker),
 * the MCP SDK and ajv (loaded only with MCP servers), mvdan-sh (required on first use).
 *
 * `import.meta.url` keeps its meaning: each bundled file of dsh's that reads it gets the URL of
 * its own compiled file (dist/src/…), which ships beside the bundle, so the inspector still finds
 * its page modules and `dsh --version` its package.json.
 *
 * Usage: `tsx scripts/bundleCli.ts [BUILD_DIR]` (default `dist`): BUILD_DIR/src/cli/bin.js → BUILD_DIR/cli/.
 */
import { build, type Plugin } from 'esbuild';
import { readFile, rm } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The packages bundled into the command (by package name); every other bare import stays external. */
export const CLI_INLINED: readonly string[] = ['zod', 'xstate', 'any-signal', 'p-limit', 'yocto-queue', 're2js', 'ignore', 'picomatch'];

const packageName = (specifier: string): string => {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
};

/** Bare imports: bundled when the package is in {@link CLI_INLINED}, left to Node otherwise. */
const externals: Plugin = {
  name: 'dsh-cli-externals',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:') || !CLI_INLINED.includes(packageName(args.path))) return { path: args.path, external: true };
      return undefined;
    });
  },
};

/** `import.meta.url` in a file of `buildDir` → that file's own URL, resolved from the bundle's (flat) output directory. */
const ownUrl = (buildDir: string, outDir: string): Plugin => ({
  name: 'dsh-cli-own-url',
  setup(b) {
    b.onLoad({ filter: /\.js$/ }, async (args) => {
      if (!args.path.startsWith(buildDir + sep)) return undefined;
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const rel = relative(outDir, args.path).split(sep).join('/');
      return { contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`), loader: 'js' };
    });
  },
});

/** Bundles `buildDir`/src/cli/bin.js into `buildDir`/cli/ (emptied first); returns the bundle's entry. */
export async function bundleCli(buildDir: string): Promise<string> {
  const from = resolve(buildDir);
  const outDir = join(from, 'cli');
  await rm(outDir, { recursive: true, force: true });
  await build({
    entryPoints: { bin: join(from, 'src', 'cli', 'bin.js') },
    outdir: outDir,
    // Every chunk sits in outDir itself: the `import.meta.url` rewrite above counts from there.
    chunkNames: 'chunk-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Not minified: stack traces stay readable (minifying saved ≈ 5–10 ms of start here, within noise).
    legalComments: 'eof',
    logLevel: 'warning',
    plugins: [externals, ownUrl(from, outDir)],
  });
  return join(outDir, 'bin.js');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await bundleCli(process.argv[2] ?? 'dist');
}
