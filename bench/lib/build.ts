/**
 * Compiles the sources the benchmark runs (src/, machines/, bench/) to plain ESM JavaScript with
 * TypeScript's own transpiler, into bench/.build/. Why: tsx compiles with esbuild's `keepNames`,
 * which wraps every function expression in a `__name(fn, "…")` call that redefines the function's
 * `name` property each time a closure is created (≈1–2 µs on this machine): a cost of the dev
 * loader, not of the library, and one that falls unevenly on code that creates closures per call.
 * The default bench therefore runs the transpiled output (as a build with tsc or a bundler ships
 * it); `--tsx` runs the sources through tsx instead.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

const ROOTS = ['src', 'machines', 'bench'];
const SKIP = new Set(['.build', 'scratch', 'node_modules']);

function* tsFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* tsFiles(p);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) yield p;
  }
}

/** Transpiles every source file to `<root>/bench/.build/<path>.js`; returns the build directory. */
export function buildForBench(root: string): string {
  const out = join(root, 'bench', '.build');
  rmSync(out, { recursive: true, force: true });
  for (const r of ROOTS) {
    for (const file of tsFiles(join(root, r))) {
      const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
        fileName: file,
        compilerOptions: {
          module: ts.ModuleKind.ESNext,
          target: ts.ScriptTarget.ES2022,
          verbatimModuleSyntax: false,
          isolatedModules: true,
          esModuleInterop: true,
          sourceMap: false,
        },
      });
      const dest = join(out, relative(root, file)).replace(/\.ts$/, '.js');
      mkdirSync(dirname(dest), { recursive: true });
      writeFileSync(dest, outputText);
    }
  }
  // Node decides ESM vs CJS per package.json: mark the build as ESM like the repo.
  writeFileSync(join(out, 'package.json'), '{ "type": "module" }\n');
  return out;
}
