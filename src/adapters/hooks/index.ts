/** Command hooks on Node: the runner that starts a hook's process in the `bash` sandbox. */
export { createHookRunner, hookCommandProblem, resolveHookProgram, type HookRunnerOptions } from './hookRunner.js';
