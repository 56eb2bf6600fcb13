// The TypeScript code blocks of README.md and docs/, extracted as a user would copy them: each
// block is a module of its own that imports from 'dsh', 'dsh/node', … and must type-check against
// the package's sources. A block whose fence says `ts run` is a complete program and is also run.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { markdownFiles, readRepoFile, repoRoot } from './markdownFiles.js';

export interface CodeBlock {
  /** Markdown file the block is in, relative to the repository root. */
  file: string;
  /** 1-based line of the block's first code line in that file. */
  line: number;
  code: string;
  run: boolean;
  tsx: boolean;
}

const FENCE = /^```(ts|typescript|tsx)((?:[ \t][^\n]*)?)\n([\s\S]*?)^```[ \t]*$/gm;

/** Every TypeScript fenced block of one markdown text. */
export function codeBlocksOf(file: string, markdown: string): CodeBlock[] {
  return [...markdown.matchAll(FENCE)].map((m) => ({
    file,
    line: markdown.slice(0, m.index).split('\n').length + 1,
    code: m[3]!,
    run: /\brun\b/.test(m[2]!),
    tsx: m[1] === 'tsx',
  }));
}

export function allCodeBlocks(): CodeBlock[] {
  return markdownFiles().flatMap((file) => codeBlocksOf(file, readRepoFile(file)));
}

/** Where the extracted modules live (gitignored; 'zod', 'xstate' and React resolve from the repository's node_modules). */
export const SNIPPET_DIR = join(repoRoot, 'test-artifacts', 'doc-snippets');

/** The package's entries (its `exports`), each mapped to its source: `dsh/server` → src/server/index.ts. */
const ENTRY_POINTS: Record<string, string> = Object.fromEntries(
  Object.entries((JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { exports: Record<string, string | { default: string }> }).exports)
    .filter(([key]) => key !== './package.json')
    .map(([key, target]) => [key === '.' ? 'dsh' : `dsh/${key.slice(2)}`, (typeof target === 'string' ? target : target.default).replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts')]),
);

export const compilerOptions: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
  jsx: ts.JsxEmit.ReactJSX,
  strict: true,
  noUncheckedIndexedAccess: true,
  skipLibCheck: true,
  esModuleInterop: true,
  noEmit: true,
  types: ['node'],
  typeRoots: [join(repoRoot, 'node_modules', '@types')],
  baseUrl: repoRoot,
  paths: Object.fromEntries(Object.entries(ENTRY_POINTS).map(([name, path]) => [name, [path]])),
};

export function snippetFileName(block: CodeBlock, index: number): string {
  return join(SNIPPET_DIR, `${block.file.replace(/[^A-Za-z0-9]+/g, '_')}_${index}_L${block.line}.${block.tsx ? 'tsx' : 'ts'}`);
}

/** Writes the blocks as modules and returns the type errors, each as "file.md:line: message". */
export function typeErrorsOf(blocks: readonly CodeBlock[]): string[] {
  rmSync(SNIPPET_DIR, { recursive: true, force: true });
  mkdirSync(SNIPPET_DIR, { recursive: true });
  const byFile = new Map<string, CodeBlock>();
  blocks.forEach((block, i) => {
    const name = snippetFileName(block, i);
    // `export {}` makes every block a module, as a user's file with imports is.
    writeFileSync(name, `${block.code}\nexport {};\n`);
    byFile.set(name, block);
  });
  const program = ts.createProgram([...byFile.keys()], compilerOptions);
  return ts.getPreEmitDiagnostics(program).flatMap((d) => {
    const block = d.file && byFile.get(d.file.fileName);
    if (!block || d.start === undefined) return d.file ? [] : [ts.flattenDiagnosticMessageText(d.messageText, '\n')];
    const { line } = d.file!.getLineAndCharacterOfPosition(d.start);
    return [`${block.file}:${block.line + line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`];
  });
}
