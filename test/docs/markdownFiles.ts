// The markdown a reader navigates: README.md and every page under docs/ (the generated API
// reference in docs/api/ excepted: TypeDoc checks its own links).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import GithubSlugger from 'github-slugger';

export const repoRoot = join(import.meta.dirname, '..', '..');

/** README.md and docs/**\/*.md, as paths relative to the repository root. */
export function markdownFiles(): string[] {
  const found = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(repoRoot, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (path !== join('docs', 'api')) walk(path);
      } else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  walk('docs');
  return found.map((p) => relative(repoRoot, join(repoRoot, p)));
}

/** The text of a markdown file with its fenced code blocks blanked (links inside code are not links). */
export function proseOf(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ' '));
}

/** The GitHub anchors of a markdown file's headings, as GitHub renders them. */
export function anchorsOf(markdown: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  for (const line of proseOf(markdown).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) anchors.add(slugger.slug(heading[1]!.replace(/`/g, '')));
  }
  for (const match of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1]!);
  return anchors;
}

export function readRepoFile(path: string): string {
  return readFileSync(join(repoRoot, path), 'utf8');
}

export interface Link { file: string; target: string }

/** The links and images of a markdown file (code excluded), with their targets as written. */
export function linksOf(file: string): Link[] {
  const prose = proseOf(readRepoFile(file)).replace(/`[^`\n]*`/g, '');
  const links: Link[] = [];
  for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ file, target: m[1]! });
  for (const m of prose.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)) links.push({ file, target: m[1]! });
  for (const m of prose.matchAll(/<(?:img|a)\s[^>]*(?:src|href)="([^"]+)"/g)) links.push({ file, target: m[1]! });
  return links;
}

