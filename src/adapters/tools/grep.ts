import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as z from 'zod';
import { ErrorCode } from '../../protocol/index.js';
import { defineTool } from '../../runtime/defineTool.js';
import { ToolError } from '../../runtime/toolError.js';
import type { SpillStore } from '../../runtime/spill/spillStore.js';
import { spilledLineBlocks } from '../../runtime/spill/spilledLines.js';
import { GitignoreRules, walkFiles } from './gitignore.js';
import { globMatcher } from './glob.js';
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
    readOnly: true,
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
        // Files are opened and directories listed through descriptors only (see VerifiedDir):
        // nothing is reopened by a name that could have been swapped for a symlink.
        const realRoot = await ws.realRoot();
        const start = await ws.open(args.path ?? '.');
        if (start.kind === 'missing') throw new ToolError(ErrorCode.FS_NOT_FOUND, `${start.path.display} does not exist`);
        if (start.kind === 'file') {
          const bytes = await readSearchable(start.handle);
          if (bytes) complete = matchLines(bytes.toString('utf8'), re, `${start.path.display}:`, out, limit);
        } else if (start.kind === 'dir') {
          try {
            const prefix = start.path.display === '.' ? '' : `${start.path.display}/`;
            // The glob is relative to the searched directory, and one without a slash matches at
            // any depth, as in ripgrep.
            const only = args.glob === undefined ? undefined : globMatcher(args.glob.includes('/') ? args.glob : `**/${args.glob}`, { dot: true });
            for await (const f of walkFiles(start.dir, start.path.display, new GitignoreRules(realRoot), exec.signal)) {
              exec.signal.throwIfAborted();
              if (only && !only(f.rel.slice(prefix.length))) continue;
              const fh = await f.dir.openFile(f.name, constants.O_RDONLY).catch(() => undefined);
              const bytes = fh && (await readSearchable(fh));
              if (!bytes) continue;
              if (!matchLines(bytes.toString('utf8'), re, `${f.rel}:`, out, limit)) {
                complete = false;
                break;
              }
            }
          } finally {
            await start.dir.close();
          }
        }
      }
      if (out.length === 0) return 'no matches';
      if (!complete) out.push(`[grep: stopped after ${limit} matching lines; narrow the pattern, path or glob, or raise maxResults]`);
      return `${out.join('\n')}\n`;
    },
  });
}

/**
 * The bytes of an opened file (closed here) if grep should search it: a regular file no larger
 * than the limit, not binary, readable; undefined otherwise.
 */
async function readSearchable(fh: FileHandle): Promise<Buffer | undefined> {
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.size > MAX_FILE_BYTES) return undefined;
    const bytes = await fh.readFile();
    return looksBinary(bytes) ? undefined : bytes;
  } catch {
    return undefined;
  } finally {
    await fh.close().catch(() => undefined);
  }
}
