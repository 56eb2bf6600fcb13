import picomatch from 'picomatch';
import * as z from 'zod';
import { ErrorCode } from '../../protocol/index.js';
import { defineTool } from '../../runtime/defineTool.js';
import { ToolError } from '../../runtime/toolError.js';
import type { VerifiedDir } from '../fs/verifiedDir.js';
import { GitignoreRules, walkFiles } from './gitignore.js';
import type { Workspace } from './workspace.js';

export const DEFAULT_GLOB_MAX_RESULTS = 1000;

/** Refuses glob patterns that would reach outside the directory they are matched in. */
export function checkGlobPattern(pattern: string): void {
  if (pattern.startsWith('/') || /^[a-zA-Z]:[\\/]/.test(pattern) || pattern.split(/[\\/]/).includes('..')) {
    throw new ToolError(ErrorCode.FS_OUTSIDE_WORKSPACE, `glob ${JSON.stringify(pattern)} reaches outside the workspace; use a relative pattern without ".."`);
  }
}

/** A test of paths (relative to the directory matched in, `/`-separated) against a glob. */
export function globMatcher(pattern: string, options: { dot: boolean }): (rel: string) => boolean {
  checkGlobPattern(pattern);
  try {
    return picomatch(pattern, { dot: options.dot });
  } catch (e) {
    throw new ToolError(ErrorCode.INVALID_ARGS, `invalid glob ${JSON.stringify(pattern)}: ${(e as Error).message}`);
  }
}

const GLOB_SPECIAL = /[*?[\]{}()!+@\\]/;

/**
 * Where a walk for `pattern` can start and how deep it must go: the leading literal directory
 * names (never symlinks: the walk opens them without following), and the number of components
 * below them when the pattern has no `**` or braces (which could span several).
 */
export function globPlan(pattern: string): { base: string[]; maxDepth: number } {
  const segs = pattern.split('/').filter((s) => s !== '' && s !== '.');
  const base: string[] = [];
  while (base.length < segs.length - 1 && !GLOB_SPECIAL.test(segs[base.length]!)) base.push(segs[base.length]!);
  const rest = segs.length - base.length;
  return { base, maxDepth: pattern.includes('**') || pattern.includes('{') ? Number.POSITIVE_INFINITY : rest };
}

/** Opens the literal directories `names` below `dir` without following symlinks; undefined when one is not a real directory. */
async function openLiteralDirs(dir: VerifiedDir, names: readonly string[]): Promise<VerifiedDir | undefined> {
  let cur = dir;
  for (const name of names) {
    let next: VerifiedDir | undefined;
    try {
      next = await cur.openDir(name);
    } catch {
      next = undefined;
    }
    if (cur !== dir) await cur.close();
    if (!next) return undefined;
    cur = next;
  }
  return cur;
}

const GlobInput = z.object({
  pattern: z.string().min(1).describe('Glob pattern, e.g. "**/*.ts" or "src/*.{js,ts}".'),
  path: z.string().min(1).optional().describe('Directory to match in, relative to the workspace root (default: the root).'),
  maxResults: z.number().int().min(1).max(100_000).optional().describe(`Most paths to return (default ${DEFAULT_GLOB_MAX_RESULTS}).`),
});

/**
 * `glob`: workspace files matching a pattern (picomatch over a walk through directory
 * descriptors that never follows a symlink), minus what `.gitignore` ignores.
 */
export function createGlobTool(ws: Workspace) {
  return defineTool({
    name: 'glob',
    description: 'List workspace files matching a glob pattern, one path per line, relative to the workspace root. Honours .gitignore.',
    input: GlobInput,
    isConcurrencySafe: () => true,
    idempotent: true,
    readOnly: true,
    async execute(args, exec): Promise<string> {
      const match = globMatcher(args.pattern, { dot: false });
      const realRoot = await ws.realRoot();
      const { path, dir } = await ws.openDirectory(args.path ?? '.');
      const paths: string[] = [];
      try {
        const plan = globPlan(args.pattern);
        const start = await openLiteralDirs(dir, plan.base);
        if (start) {
          try {
            const prefix = path.display === '.' ? '' : `${path.display}/`;
            const startRel = [...(prefix ? [path.display] : []), ...plan.base].join('/');
            const rules = new GitignoreRules(realRoot);
            // Symlinks are not followed: a link could lead the match out of the workspace.
            for await (const f of walkFiles(start, startRel, rules, exec.signal, plan.maxDepth)) {
              if (match(f.rel.slice(prefix.length))) paths.push(f.rel);
            }
          } finally {
            if (start !== dir) await start.close();
          }
        }
      } finally {
        await dir.close();
      }
      paths.sort();
      const limit = args.maxResults ?? DEFAULT_GLOB_MAX_RESULTS;
      if (paths.length === 0) return 'no files match';
      const shown = paths.slice(0, limit);
      if (paths.length > limit) shown.push(`[glob: ${paths.length - limit} more paths not shown; narrow the pattern or raise maxResults]`);
      return `${shown.join('\n')}\n`;
    },
  });
}
