/**
 * One `dsh run` session: a runtime on the session log with the built-in tools confined to the
 * working directory, the permission policies, and the approval service; turns run one after
 * another. `RunSetup.config` (a loaded dsh.config.json) sets the runtime options, the `bash`
 * deadline and the policies (`configuredPolicies`); `RunSetup.installPolicies`, given, replaces
 * those policies altogether.
 *
 * How the policies combine (pre-execute order): plan mode first, then the config's permission
 * rules (the first matching rule decides: `deny` is POLICY_DENIED, `allow` runs the call without a
 * question, `ask` asks), then, when no rule matched, the default policy (ask before `write`, `edit`
 * and `bash`). The bash deny patterns are a guard: nothing allows a matching command back.
 * `--allow TOOL` answers yes to every question about TOOL (the default policy's or a config
 * `ask`), but never turns a deny (plan mode, a `deny` rule, a deny pattern) into an allow.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { InspectionEvent } from 'xstate';
import { createBuiltinTools, type BuiltinTools } from '../../adapters/tools/builtinTools.js';
import type { BashIsolation } from '../../adapters/tools/bash.js';
import { DEFAULT_MAX_READ_BYTES } from '../../adapters/tools/read.js';
import type { ApprovalService } from '../../runtime/pipeline/index.js';
import { createRuntime, type Runtime } from '../../runtime/createRuntime.js';
import type { Telemetry } from '../../runtime/telemetry/telemetryOptions.js';
import { runtimeOptionsFromConfig } from '../../runtime/policies/applyConfig.js';
import { configuredPolicies as installConfigured } from '../../runtime/policies/configuredPolicies.js';
import { modelSummarizer } from '../../runtime/context/summarizer.js';
import type { DshConfig } from '../../config/schema.js';
import { createHookRunner } from '../../adapters/hooks/hookRunner.js';
import type { HookRunner } from '../../runtime/policies/commandHooks.js';
import type { SessionLog } from '../../runtime/log/sessionLog.js';
import type { TurnHandle } from '../../runtime/turns.js';

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
  /** The loaded dsh.config.json (project over user); default `{}`. */
  config?: DshConfig;
  /** Plan mode on whatever the config says (`--plan`). */
  plan?: boolean;
  /**
   * Installs the permission policies on the runtime (hooks, guards). Default: `configuredPolicies`.
   */
  installPolicies?: (runtime: Runtime, setup: RunSetup) => void;
  bashIsolation?: BashIsolation;
  /** Runs the config's command hooks (default: in the sandbox of the session's `bash`). */
  hookRunner?: HookRunner;
  /** The session's id, given to command hooks. */
  sessionId?: string;
  system?: string;
  maxSteps?: number;
  /** OpenTelemetry spans and metrics of the session's runtime (`--otel`: src/adapters/telemetry/otlpTelemetry.ts). */
  telemetry?: Telemetry;
  /** The ids of the turns it starts (default `turn-<n>`, n counting the log's turns). */
  newTurnId?: () => string;
}

/**
 * The session's policies: the config's, then the default question (runtime/policies/configuredPolicies.ts,
 * the one function `dsh run`, `dsh resume`, the page, `dsh policy test` and `dsh policy replay` share).
 */
export function configuredPolicies(runtime: Runtime, setup: Pick<RunSetup, 'allow' | 'config' | 'plan' | 'cwd' | 'hookRunner' | 'sessionId'>): void {
  installConfigured(runtime, setup.config ?? {}, {
    ...(setup.allow ? { allow: setup.allow } : {}),
    plan: setup.plan === true,
    root: setup.cwd,
    ...(setup.hookRunner ? { hookRunner: setup.hookRunner } : {}),
    ...(setup.sessionId !== undefined ? { sessionId: setup.sessionId } : {}),
  });
}

/** `--allow TOOL`: every question about TOOL is answered yes without asking. */
export function preApproved(approval: ApprovalService, allow: readonly string[] = []): ApprovalService {
  if (allow.length === 0) return approval;
  const allowed = new Set(allow);
  return { request: (req, signal) => (allowed.has(req.toolName) ? Promise.resolve('allowed-once') : approval.request(req, signal)) };
}

export { DEFAULT_SYSTEM } from './projectInstructions.js';
import { DEFAULT_SYSTEM } from './projectInstructions.js';

export interface AgentSession {
  readonly runtime: Runtime;
  readonly tools: BuiltinTools;
  /** Starts a turn. */
  startTurn(input: string, options?: { inspect?: (e: InspectionEvent) => void; signal?: AbortSignal }): TurnHandle;
  /**
   * Resolves once no command hook is running (a result observer runs after its call has settled):
   * wait for it before the log and the sandbox are closed, so every hook runs and is recorded.
   */
  settleHooks(): Promise<void>;
  /** Continues the session's suspended turn (its pending approvals are asked first). */
  resumeTurn(options?: { inspect?: (e: InspectionEvent) => void; signal?: AbortSignal }): TurnHandle;
}

export function createAgentSession(setup: RunSetup): AgentSession {
  const config = setup.config ?? {};
  const options = runtimeOptionsFromConfig(config);
  // `context.summarize: "model"`: folded turns are summarised by the session's model (a fresh one per fold).
  if (options.contextWindow && config.context?.summarize === 'model') options.contextWindow = { ...options.contextWindow, summarizer: (request) => modelSummarizer(setup.model())(request) };
  const runtime = createRuntime({
    // Every result carries its per-stage durations, so a recorded session shows each call's stages with their timings (dsh inspect).
    stageTimings: true,
    log: setup.log,
    approval: preApproved(setup.approval, setup.allow),
    ...options,
    ...(config.callOptions ? { callOptions: config.callOptions } : {}),
    ...(setup.telemetry ? { telemetry: setup.telemetry } : {}),
    ...(setup.newTurnId ? { newTurnId: setup.newTurnId } : {}),
  });
  const tools = createBuiltinTools({
    root: setup.cwd,
    spillStore: runtime.spillStore,
    bashIsolation: setup.bashIsolation,
    ...(config.sandbox ? { sandbox: config.sandbox } : {}),
    ...(config.timeouts?.bashMs !== undefined ? { bashTimeoutMs: config.timeouts.bashMs } : {}),
    // A `read` page stays under the inline limit (as the defaults do: 12 KiB pages, 16 KiB inline).
    ...(config.maxInlineBytes !== undefined ? { maxReadBytes: Math.min(DEFAULT_MAX_READ_BYTES, Math.floor((config.maxInlineBytes * 3) / 4)) } : {}),
  });
  for (const tool of tools.all) runtime.tools.register(tool);
  // Command hooks run in the sandbox the session's `bash` runs in.
  const running = new Set<Promise<unknown>>();
  const runHook = setup.hookRunner ?? createHookRunner({ root: setup.cwd, sandbox: tools.sandbox, ...(setup.bashIsolation ? { isolation: setup.bashIsolation } : {}) });
  const hookRunner: HookRunner = (request) => {
    const run = runHook(request);
    running.add(run);
    void run.then(
      () => running.delete(run),
      () => running.delete(run),
    );
    return run;
  };
  (setup.installPolicies ?? configuredPolicies)(runtime, { ...setup, hookRunner });
  const turnOptions = (options: { inspect?: (e: InspectionEvent) => void; signal?: AbortSignal }) => ({
    model: setup.model(),
    system: setup.system ?? DEFAULT_SYSTEM,
    ...(setup.maxSteps !== undefined ? { maxSteps: setup.maxSteps } : {}),
    ...(options.inspect ? { inspect: options.inspect } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return {
    runtime,
    tools,
    async settleHooks() {
      while (running.size > 0) {
        await Promise.allSettled([...running]);
        // What the hook's answer leads to (its failure logged) happens in the turns after.
        await new Promise((r) => setImmediate(r));
      }
    },
    startTurn(input, options = {}) {
      // A follow-up turn (a late steering message) gets a model of its own, as every turn does.
      return runtime.startTurn({ ...turnOptions(options), input, followUpOptions: () => ({ model: setup.model() }) });
    },
    resumeTurn(options = {}) {
      return runtime.resumeTurn(turnOptions(options));
    },
  };
}
