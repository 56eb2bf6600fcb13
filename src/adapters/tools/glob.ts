import { stat } from 'node:fs/promises';
import { posix, relative, sep } from 'node:path';
import { glob as tinyglob } from 'tinyglobby';
import { z } from 'zod';
import { ErrorCode } from '../../protocol/index.js';
import { defineTool } from '../../runtime/defineTool.js';
import { ToolError } from '../../runtime/toolError.js';
import { GitignoreRules } from './gitignore.js';
import type { Workspace } from './workspace.js';

export const DEFAULT_GLOB_MAX_RESULTS = 1000;

/** Refuses glob patterns that would reach outside the directory they are matched in. */
export function checkGlobPattern(pattern: string): void {
  if (pattern.startsWith('/') || /^[a-zA-Z]:[\\/]/.test(pattern) || pattern.split(/[\\/]/).includes('..')) {
    throw new ToolError(ErrorCode.FS_OUTSIDE_WORKSPACE, `glob ${JSON.stringify(pattern)} reaches outside the workspace; use a relative pattern without ".."`);
  }
}

const GlobInput = z.object({
  pattern: z.string().min(1).describe('Glob pattern, e.g. "**/*.ts" or "src/*.{js,ts}".'),
  path: z.string().min(1).optional().describe('Directory to match in, relative to the workspace root (default: the root).'),
  maxResults: z.number().int().min(1).max(100_000).optional().describe(`Most paths to return (default ${DEFAULT_GLOB_MAX_RESULTS}).`),
});

/** `glob`: workspace files matching a pattern (via tinyglobby), minus what `.gitignore` ignores. */
export function createGlobTool(ws: Workspace) {
  return defineTool({
    name: 'glob',
    description: 'List workspace files matching a glob pattern, one path per line, relative to the workspace root. Honours .gitignore.',
    input: GlobInput,
    isConcurrencySafe: () => true,
    idempotent: true,
    async execute(args, exec): Promise<string> {
      checkGlobPattern(args.pattern);
      const realRoot = await ws.realRoot();
      const dir = await ws.resolve(args.path ?? '.');
      const st = await stat(dir.real).catch(() => undefined);
      if (!st) throw new ToolError(ErrorCode.FS_NOT_FOUND, `${dir.display} does not exist`);
      if (!st.isDirectory()) throw new ToolError(ErrorCode.TOOL_FAILED, `${dir.display} is not a directory`);
      // Symlinks are not followed: a link could lead the match out of the workspace.
      const found = await tinyglob(args.pattern, {
        cwd: dir.real,
        onlyFiles: true,
        followSymbolicLinks: false,
        expandDirectories: false,
        ignore: ['**/.git/**'],
        signal: exec.signal,
      });
      const base = relative(realRoot, dir.real).split(sep).join('/');
      const rules = new GitignoreRules(realRoot);
      const paths: string[] = [];
      for (const f of found.map((f) => (base === '' ? f : posix.join(base, f))).sort()) {
        exec.signal.throwIfAborted();
        if (!(await rules.ignores(f, false))) paths.push(f);
      }
      const limit = args.maxResults ?? DEFAULT_GLOB_MAX_RESULTS;
      if (paths.length === 0) return 'no files match';
      const shown = paths.slice(0, limit);
      if (paths.length > limit) shown.push(`[glob: ${paths.length - limit} more paths not shown; narrow the pattern or raise maxResults]`);
      return `${shown.join('\n')}\n`;
    },
  });
}
