// The code cites the behaviour it implements as `SPEC §n` (or §n.m). Each citation must name a
// section of docs/spec.md, the project's own statement of what it guarantees.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRepoFile, repoRoot } from './markdownFiles.js';

const CITATION = /SPEC\s+§\s?(\d+(?:\.\d+)*)/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(repoRoot, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|tsx)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** The section numbers docs/spec.md defines: headings such as `## §9 …` and `### §9.2 …`. */
export function specSections(markdown: string): Set<string> {
  return new Set([...markdown.matchAll(/^#{2,4}\s+§(\d+(?:\.\d+)*)\s/gm)].map((m) => m[1]!));
}

describe('SPEC § citations', () => {
  const sections = specSections(readRepoFile('docs/spec.md'));
  const citations = ['src', 'machines'].flatMap(sourceFiles).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(CITATION)].map((m) => ({ file: file.slice(repoRoot.length + 1), section: m[1]! })),
  );

  it('the code cites the spec', () => {
    expect(citations.length).toBeGreaterThan(20);
  });

  it('every SPEC § citation in src/ and machines/ names a section of docs/spec.md', () => {
    const dangling = citations.filter((c) => !sections.has(c.section)).map((c) => `${c.file}: SPEC §${c.section}`);
    expect(dangling).toEqual([]);
  });

  it('finds a dangling citation (the checker itself)', () => {
    expect(sections.has('8.18')).toBe(true);
    expect(sections.has('8.19')).toBe(false);
    expect(specSections('## §3 Parallel\n### §3.1 Groups\n').has('3.1')).toBe(true);
  });
});
