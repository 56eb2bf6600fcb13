// Examples that cannot rot: every TypeScript block in README.md and docs/ type-checks against the
// package, and every block marked `ts run` runs to completion.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allCodeBlocks, codeBlocksOf, compilerOptions, SNIPPET_DIR, snippetFileName, typeErrorsOf } from './codeBlocks.js';
import { repoRoot } from './markdownFiles.js';

const blocks = allCodeBlocks();

describe('code blocks in README.md and docs/', () => {
  it('there are blocks to check, and some are complete programs', () => {
    expect(blocks.length).toBeGreaterThan(5);
    expect(blocks.some((b) => b.run)).toBe(true);
  });

  it('every TypeScript block type-checks against the package', () => {
    expect(typeErrorsOf(blocks)).toEqual([]);
  }, 120_000);

  it('a block that no longer type-checks is reported with its file and line (the checker itself)', () => {
    const md = '# t\n\n```ts\nimport { createRuntime } from \'dsh\';\nconst rt = createRuntime({ tools: [] });\nrt.noSuchMethod();\n```\n';
    const errors = typeErrorsOf(codeBlocksOf('docs/example.md', md));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^docs\/example\.md:6: Property 'noSuchMethod' does not exist/);
  }, 120_000);

  const programs = blocks.map((b, i) => ({ b, i })).filter(({ b }) => b.run);
  it.each(programs.map(({ b, i }) => [`${b.file}:${b.line}`, b, i] as const))('%s runs to completion', (_where, block, index) => {
    const tsconfig = join(SNIPPET_DIR, 'tsconfig.json');
    writeFileSync(tsconfig, JSON.stringify({ compilerOptions: { baseUrl: repoRoot, paths: compilerOptions.paths, module: 'ESNext', moduleResolution: 'Bundler', jsx: 'react-jsx' } }));
    const file = snippetFileName(block, index);
    writeFileSync(file, `${block.code}\nexport {};\n`);
    const run = spawnSync(process.execPath, ['--import', 'tsx', file], {
      cwd: SNIPPET_DIR,
      env: { ...process.env, TSX_TSCONFIG_PATH: tsconfig, NO_COLOR: '1' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect({ status: run.status, stderr: run.stderr.slice(-2000) }).toEqual({ status: 0, stderr: expect.any(String) });
  }, 150_000);
});
