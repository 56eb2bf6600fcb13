/**
 * The checks of a config's command hooks when `dsh run` (or `dsh resume`) loads it, before any
 * session file is made: every hook's program exists and lies out of the agent's reach (SPEC
 * §10.3, §10.7: under `.dsh/hooks/`, or outside the workspace; a program named bare is not found
 * on PATH inside the workspace; no `python -m`/`-c`), and every example of a deciding hook
 * holds when the real hook is run, in the sandbox the session's `bash` would use. The first
 * problem is a one-line {@link ConfigError} naming the hook (and the example).
 */
import { homedir } from 'node:os';
import { isAbsolute, relative } from 'node:path';
import { createHookRunner, hookCommandProblem } from '../adapters/hooks/hookRunner.js';
import { createSandbox } from '../adapters/sandbox/sandbox.js';
import { userConfigDir } from '../adapters/sandbox/protectedPaths.js';
import { commandHookField } from '../runtime/policies/commandHooks.js';
import { checkHookExamples, describeExampleFailure } from '../runtime/policies/hookExamples.js';
import type { ExampleFailure } from '../runtime/policies/ruleExamples.js';
import { ConfigError } from './load.js';
import type { DshConfig } from './schema.js';

const STAGES = ['preExecute', 'guard', 'postExecute', 'result'] as const;

/** How a config file is named in an error: relative to `cwd` when it lies under it. */
export function shownConfigFile(cwd: string, files: readonly string[]): string {
  const file = files.at(-1);
  if (file === undefined) return 'config';
  const rel = relative(cwd, file);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}

/** Throws a ConfigError for the first hook that is unsafe, missing, or fails one of its examples. */
export async function checkConfigHooks(o: {
  config: DshConfig;
  /** The workspace root (where `dsh run` works). */
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  /** The config file as errors name it. */
  shownAs: string;
}): Promise<void> {
  const hooks = o.config.hooks;
  if (!hooks) return;
  const userDir = userConfigDir(o.env, o.env.HOME || homedir());
  for (const stage of STAGES) {
    for (const [i, entry] of (hooks[stage] ?? []).entries()) {
      const problem = hookCommandProblem(o.cwd, entry.command, userDir, o.env.PATH);
      if (problem) throw new ConfigError(o.shownAs, `hooks.${stage}[${i}].command`, `${o.shownAs}: ${commandHookField(stage, i, entry)}: ${problem}`);
    }
  }
  const failures = await runHookExamples(o);
  const [first] = failures;
  if (first) {
    const more = failures.length > 1 ? ` (and ${failures.length - 1} more)` : '';
    throw new ConfigError(o.shownAs, first.rule.slice(0, first.rule.indexOf(' ')), `${o.shownAs}: ${describeExampleFailure(first)}${more}`.replace(/\r?\n/g, '\\n'));
  }
}

/**
 * Runs every example of the config's deciding hooks, each hook in the sandbox the session's `bash`
 * would use (the config's `sandbox` over `cwd`), and resolves with the failures (`dsh policy test`
 * lists them; `dsh run` refuses the config on the first).
 */
export async function runHookExamples(o: { config: DshConfig; cwd: string; env: Readonly<Record<string, string | undefined>> }): Promise<ExampleFailure[]> {
  const hooks = o.config.hooks;
  const hasExamples = [...(hooks?.preExecute ?? []), ...(hooks?.guard ?? [])].some((e) => (e.examples?.allow?.length ?? 0) + (e.examples?.deny?.length ?? 0) > 0);
  if (!hasExamples) return [];
  const userDir = userConfigDir(o.env, o.env.HOME || homedir());
  const sandbox = createSandbox({ ...(o.config.sandbox ?? {}), root: o.cwd, env: o.env, userConfigDir: userDir });
  try {
    return await checkHookExamples(o.config, createHookRunner({ root: o.cwd, sandbox, env: o.env }), o.cwd);
  } finally {
    await sandbox.dispose();
  }
}
