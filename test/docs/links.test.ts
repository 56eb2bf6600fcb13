// Every relative link and anchor in README.md and docs/ resolves, offline: a reader who follows a
// link lands on a file that exists, at a heading that exists.
import { existsSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf, type Link, linksOf, markdownFiles, readRepoFile, repoRoot } from './markdownFiles.js';

/** Why a link is broken, or undefined when it resolves. */
export function brokenReason({ file, target }: Link): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // absolute (https:, mailto:): not checked offline
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
  const path = pathPart === '' ? file : normalize(join(dirname(file), decodeURIComponent(pathPart)));
  if (path.startsWith('..')) return `points outside the repository (${path})`;
  const abs = join(repoRoot, path);
  if (!existsSync(abs)) return `${path} does not exist`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(abs).isDirectory() || !path.endsWith('.md')) return `#${anchor} on a file that is not markdown (${path})`;
  return anchorsOf(readRepoFile(path)).has(anchor) ? undefined : `${path} has no heading #${anchor}`;
}

describe('documentation links', () => {
  const files = markdownFiles();

  it('finds the README and the docs pages', () => {
    expect(files).toContain('README.md');
    expect(files).toContain('docs/spec.md');
  });

  it.each(files)('every relative link and anchor in %s resolves', (file) => {
    const broken = linksOf(file).map((l) => ({ ...l, why: brokenReason(l) })).filter((l) => l.why !== undefined);
    expect(broken.map((l) => `${l.target}: ${l.why}`)).toEqual([]);
  });

  it('reports a missing file and a missing anchor (the checker itself)', () => {
    expect(brokenReason({ file: 'README.md', target: 'docs/no-such-page.md' })).toMatch(/does not exist/);
    expect(brokenReason({ file: 'README.md', target: 'docs/spec.md#no-such-heading' })).toMatch(/no heading/);
    expect(brokenReason({ file: 'docs/spec.md', target: '#810-invalid-calls-are-still-pairs' })).toBeUndefined();
    expect(brokenReason({ file: 'docs/spec.md', target: '../README.md' })).toBeUndefined();
  });
});
