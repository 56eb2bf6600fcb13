/**
 * One `dsh run` session: a runtime on the session log with the built-in tools confined to the
 * working directory, the permission policies, and the approval service; turns run one after
 * another. The seam for configuration (dsh.config.json, permission rules, plan mode) is
 * `RunSetup.installPolicies`: given, it replaces the default policy (ask before `write`, `edit`
 * and `bash` unless pre-approved with `--allow`).
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { InspectionEvent } from 'xstate';
import { createBuiltinTools, type BuiltinTools } from '../../adapters/tools/builtinTools.js';
import type { BashIsolation } from '../../adapters/tools/bash.js';
import type { ApprovalService } from '../../runtime/pipeline/index.js';
import { createRuntime, type Runtime } from '../../runtime/createRuntime.js';
import type { SessionLog } from '../../runtime/log/sessionLog.js';
import type { TurnHandle } from '../../runtime/turns.js';

/** Tools that change files or run commands: asked about unless pre-approved. */
export const ASKING_TOOLS: readonly string[] = ['write', 'edit', 'bash'];

export interface RunSetup {
  /** The directory the tools work in. */
  cwd: string;
  /** The session log (a JSONL file for the CLI). */
  log: SessionLog;
  /** The model for each turn (the embedded scripted model makes a fresh one per turn). */
  model: () => LanguageModelV3;
  /** Who answers `ask` decisions. */
  approval: ApprovalService;
  /** Tools whose `ask` is pre-approved (`--allow TOOL`). */
  allow?: readonly string[];
  /**
   * Installs the permission policies on the runtime (hooks, guards). Default: `defaultPolicies`.
   * This is where configuration plugs in.
   */
  installPolicies?: (runtime: Runtime, setup: RunSetup) => void;
  bashIsolation?: BashIsolation;
  system?: string;
  maxSteps?: number;
}

/** Asks before `write`, `edit` and `bash` (unless in `setup.allow`); everything else runs. */
export function defaultPolicies(runtime: Runtime, setup: Pick<RunSetup, 'allow'>): void {
  const allowed = new Set(setup.allow ?? []);
  runtime.hooks.on('tools/pre-execute', 'ask-before-changes', (call, next) => {
    if (!ASKING_TOOLS.includes(call.toolName) || allowed.has(call.toolName)) return next();
    return { kind: 'ask', reason: call.toolName === 'bash' ? 'the model wants to run a command' : 'the model wants to change a file' };
  });
}

export const DEFAULT_SYSTEM = 'You are dsh, a coding agent working in the current directory through the tools you are given. Be brief.';

export interface AgentSession {
  readonly runtime: Runtime;
  readonly tools: BuiltinTools;
  /** Starts a turn. */
  startTurn(input: string, options?: { inspect?: (e: InspectionEvent) => void; signal?: AbortSignal }): TurnHandle;
}

export function createAgentSession(setup: RunSetup): AgentSession {
  const runtime = createRuntime({ log: setup.log, approval: setup.approval });
  const tools = createBuiltinTools({ root: setup.cwd, spillStore: runtime.spillStore, bashIsolation: setup.bashIsolation });
  for (const tool of tools.all) runtime.tools.register(tool);
  (setup.installPolicies ?? defaultPolicies)(runtime, setup);
  return {
    runtime,
    tools,
    startTurn(input, options = {}) {
      return runtime.startTurn({
        model: setup.model(),
        input,
        system: setup.system ?? DEFAULT_SYSTEM,
        ...(setup.maxSteps !== undefined ? { maxSteps: setup.maxSteps } : {}),
        ...(options.inspect ? { inspect: options.inspect } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    },
  };
}
