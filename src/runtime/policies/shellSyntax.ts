/**
 * mvdan-sh, the shell parser (1.5 MB of GopherJS in one CommonJS file), loaded when the first line
 * is parsed rather than when the policies are imported. In Node an ESM `import` of that file makes
 * Node scan all of it for its exports first (cjs-module-lexer, ≈ 140 ms here), and every `dsh run`
 * imports the policies before its first model request; a `require` reads it without the scan, and
 * only once a command is checked. Browser-safe: where there is no synchronous `require` (a browser,
 * or Node before 20.16 without `process.getBuiltinModule`) the parser is imported with this module,
 * as before.
 */
import type sh from 'mvdan-sh';

type ShModule = typeof sh;

/** Node's `process.getBuiltinModule` (Node ≥ 20.16), or undefined (a browser, an older Node). */
const builtinModule = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule;

/** Where the parser cannot be required later, it is imported now (a top-level await: importers wait for it). */
const imported: ShModule | undefined = builtinModule ? undefined : (await import('mvdan-sh')).default;

/** The parser module: required on first use in Node, the one imported with this module elsewhere. */
export function loadShellSyntax(): ShModule {
  // Stryker disable next-line ConditionalExpression: in Node, where the mutant runs, nothing was imported; the other path is pinned in a child process (shellSyntax.test.ts)
  if (imported) return imported;
  const { createRequire } = builtinModule!('node:module') as typeof import('node:module');
  return createRequire(import.meta.url)('mvdan-sh') as ShModule;
}
