/**
 * What keeps a hook running the code the user installed, not what the model wrote (SPEC §10.7,
 * issue 31 item 6). Pure: the caller says what exists and what tools can write.
 *
 * A tool call can write anywhere in the workspace except the protected paths (`.dsh/`, `.git`,
 * …). So, for a hook:
 * - its PATH keeps only directories tools cannot write (absolute, and outside the workspace or
 *   under a protected path): a program found by name is never one the model planted
 *   ({@link hookSearchPath}; a pyenv shim in `~/.pyenv/shims` stays found);
 * - the variables that make an interpreter load code from elsewhere are removed, even when the
 *   config passes them ({@link HOOK_STRIPPED_ENV});
 * - in the hook's sandbox, every `node_modules` and `package.json` that node would consult from
 *   the hook's script upwards and that tools can write (`<root>/node_modules`,
 *   `<root>/package.json`, …) is covered: an empty directory, a `{}` file
 *   ({@link hookHiddenPaths}). A hook's dependencies belong in `.dsh/hooks/node_modules`
 *   (protected, and found first).
 */
import { dirname, isAbsolute, join, relative } from 'node:path';

/** Variables that add code or module paths to an interpreter or the loader: never given to a hook. */
export const HOOK_STRIPPED_ENV: readonly string[] = [
  'NODE_OPTIONS',
  'NODE_PATH',
  'NODE_REPL_EXTERNAL_MODULE',
  'PYTHONPATH',
  'PYTHONSTARTUP',
  'PYTHONHOME',
  'PYTHONUSERBASE',
  'PYTHONEXECUTABLE',
  'PERL5LIB',
  'PERL5OPT',
  'PERLLIB',
  'RUBYLIB',
  'RUBYOPT',
  'GEM_PATH',
  'GEM_HOME',
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'LD_AUDIT',
  'BASH_ENV',
  'ENV',
  'JAVA_TOOL_OPTIONS',
  'CLASSPATH',
];

/** Whether tools can write `path` (absolute): inside `root` and not under a protected path. */
export type ToolWritable = (path: string) => boolean;

/** `isToolWritable` for a workspace: inside `root` (absolute, resolved) and not protected. */
export function toolWritableIn(root: string, isProtected: (path: string) => boolean): ToolWritable {
  return (path) => {
    const rel = relative(root, path);
    const inside = rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
    return inside && !isProtected(path);
  };
}

/** PATH without the directories tools can write, nor relative ones (an empty entry is the cwd). */
export function hookSearchPath(pathVar: string | undefined, isToolWritable: ToolWritable): string {
  return (pathVar ?? '')
    .split(':')
    .filter((d) => d !== '' && isAbsolute(d) && !isToolWritable(d))
    .join(':');
}

/**
 * The directories (`node_modules`) and files (`package.json`) to cover for a hook whose scripts
 * (absolute, resolved) are `scripts`, running in `cwd`: those node would consult from each one's
 * directory up to `/`, that exist and that tools can write.
 */
export function hookHiddenPaths(
  scripts: readonly string[],
  cwd: string,
  isToolWritable: ToolWritable,
  kindOf: (path: string) => 'dir' | 'file' | 'missing',
): { dirs: string[]; files: string[] } {
  const dirs = new Set<string>();
  const files = new Set<string>();
  const starts = [...scripts.map((s) => dirname(s)), cwd];
  for (const start of starts) {
    for (let d = start; ; d = dirname(d)) {
      const nm = join(d, 'node_modules');
      if (isToolWritable(nm) && kindOf(nm) === 'dir') dirs.add(nm);
      const pj = join(d, 'package.json');
      if (isToolWritable(pj) && kindOf(pj) === 'file') files.add(pj);
      if (dirname(d) === d) break;
    }
  }
  return { dirs: [...dirs], files: [...files] };
}

/** Why a Python hook would import from the working directory (the workspace root), or undefined. */
export function pythonCwdImport(command: readonly string[]): string | undefined {
  const program = command[0] ?? '';
  const base = program.slice(program.lastIndexOf('/') + 1);
  if (!/^python[0-9.]*$/.test(base)) return undefined;
  for (const arg of command.slice(1)) {
    if (!arg.startsWith('-') || arg.startsWith('--')) break;
    if (/^-[A-Za-z]*[mc]/.test(arg)) return `${JSON.stringify(`${base} ${arg}`)} puts the working directory (the workspace root, which the agent can write) first on Python's import path: run a script under .dsh/hooks/ instead (python .dsh/hooks/x.py)`;
  }
  return undefined;
}

/**
 * When the home itself is tool-writable (a workspace at or above `$HOME`): the per-user module
 * places an interpreter loads from it. Node's global folders are covered, and Python's user site
 * (`~/.local/lib/python*`, with its `usercustomize`) is turned off (`PYTHONNOUSERSITE=1`).
 */
export function homeModulePlaces(home: string | undefined, isToolWritable: ToolWritable, kindOf: (path: string) => 'dir' | 'file' | 'missing'): { dirs: string[]; env: Record<string, string> } {
  if (!home || !isAbsolute(home) || !isToolWritable(home)) return { dirs: [], env: {} };
  const dirs = ['.node_modules', '.node_libraries'].map((d) => join(home, d)).filter((d) => kindOf(d) === 'dir');
  return { dirs, env: { PYTHONNOUSERSITE: '1' } };
}
