import { readFile, stat } from 'node:fs/promises';
import { posix, relative, sep } from 'node:path';
import { glob as tinyglob } from 'tinyglobby';
import { z } from 'zod';
import { ErrorCode } from '../../protocol/index.js';
import { defineTool } from '../../runtime/defineTool.js';
import { ToolError } from '../../runtime/toolError.js';
import type { SpillStore } from '../../runtime/spillStore.js';
import { spilledLineBlocks } from '../../runtime/spillLines.js';
import { GitignoreRules, walkFiles } from './gitignore.js';
import { checkGlobPattern } from './glob.js';
import { compileLineMatcher, type LineMatcher } from './lineMatcher.js';
import { looksBinary } from './read.js';
import type { Workspace } from './workspace.js';

export const DEFAULT_GREP_MAX_RESULTS = 1000;
const MAX_LINE_CHARS = 500;
const MAX_FILE_BYTES = 8 * 1024 * 1024;

const GrepInput = z.object({
  pattern: z.string().min(1).describe('Regular expression in RE2 syntax (as in JavaScript, but no backreferences or lookaround), matched against each line.'),
  path: z.string().min(1).optional().describe('File or directory to search, relative to the workspace root (default: the whole workspace).'),
  glob: z.string().min(1).optional().describe('Only search files matching this glob (e.g. "*.ts", "src/**/*.md").'),
  locator: z.string().min(1).optional().describe('Search a spilled output by its locator instead of the workspace.'),
  ignoreCase: z.boolean().optional(),
  maxResults: z.number().int().min(1).max(100_000).optional().describe(`Most matching lines to return (default ${DEFAULT_GREP_MAX_RESULTS}).`),
});

const clip = (line: string) => (line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line);

/** Appends `prefix:lineNo:line` for every matching line (the first is `firstLine`); returns false once `limit` is reached. */
function matchLines(text: string, re: LineMatcher, prefix: string, out: string[], limit: number, firstLine = 1): boolean {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.endsWith('\r') ? lines[i]!.slice(0, -1) : lines[i]!;
    if (!re.test(line)) continue;
    if (out.length >= limit) return false;
    out.push(`${prefix}${firstLine + i}:${clip(line)}`);
  }
  return true;
}

/** `grep`: a regex over the workspace's files (honouring `.gitignore`) or over a spilled output. */
export function createGrepTool(ws: Workspace, options: { spillStore?: SpillStore } = {}) {
  return defineTool({
    name: 'grep',
    description:
      'Search file contents with a regular expression (RE2 syntax, matched in linear time). Prints "path:line:text" for each matching line, ' +
      'skipping files ignored by .gitignore, binary files and .git. With "locator", searches a spilled output instead.',
    input: GrepInput,
    isConcurrencySafe: () => true,
    idempotent: true,
    async execute(args, exec): Promise<string> {
      const re = compileLineMatcher(args.pattern, args.ignoreCase);
      const limit = args.maxResults ?? DEFAULT_GREP_MAX_RESULTS;
      const out: string[] = [];
      let complete = true;
      if (args.locator !== undefined) {
        if (!options.spillStore) throw new ToolError(ErrorCode.FS_NOT_FOUND, 'this session has no spill store, so no locator can be searched');
        // Streamed a block of whole lines at a time: the spilled output is never loaded whole.
        for await (const block of spilledLineBlocks(options.spillStore, args.locator, exec.signal)) {
          if (!(complete = matchLines(block.text, re, '', out, limit, block.firstLine))) break;
        }
      } else {
        const realRoot = await ws.realRoot();
        const start = await ws.resolve(args.path ?? '.');
        const rules = new GitignoreRules(realRoot);
        const st = await stat(start.real).catch(() => undefined);
        if (!st) throw new ToolError(ErrorCode.FS_NOT_FOUND, `${start.display} does not exist`);
        const only = args.glob === undefined || !st.isDirectory() ? undefined : await globFilter(start.real, realRoot, args.glob, exec.signal);
        const files = st.isDirectory() ? walkFiles(realRoot, start.real, rules, exec.signal) : single(start.real, start.display);
        for await (const f of files) {
          exec.signal.throwIfAborted();
          if (only && !only.has(f.rel)) continue;
          const size = (await stat(f.real).catch(() => undefined))?.size ?? 0;
          if (size > MAX_FILE_BYTES) continue;
          const bytes = await readFile(f.real).catch(() => undefined);
          if (!bytes || looksBinary(bytes)) continue;
          if (!matchLines(bytes.toString('utf8'), re, `${f.rel}:`, out, limit)) {
            complete = false;
            break;
          }
        }
      }
      if (out.length === 0) return 'no matches';
      if (!complete) out.push(`[grep: stopped after ${limit} matching lines; narrow the pattern, path or glob, or raise maxResults]`);
      return `${out.join('\n')}\n`;
    },
  });
}

async function* single(real: string, rel: string) {
  yield { real, rel };
}

/**
 * The files (relative to the root) a grep `glob` admits. The glob is relative to the searched
 * directory, and one without a slash matches at any depth, as in ripgrep.
 */
async function globFilter(startReal: string, realRoot: string, pattern: string, signal: AbortSignal): Promise<Set<string>> {
  checkGlobPattern(pattern);
  const p = pattern.includes('/') ? pattern : `**/${pattern}`;
  const found = await tinyglob(p, { cwd: startReal, dot: true, followSymbolicLinks: false, expandDirectories: false, ignore: ['**/.git/**'], signal });
  const base = relative(realRoot, startReal).split(sep).join('/');
  return new Set(found.map((f) => (base === '' ? f : posix.join(base, f))));
}
