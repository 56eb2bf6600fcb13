/**
 * The policies of a `dsh.config.json` (plan mode, permission rules, bash deny patterns) installed
 * on a runtime, and the runtime options it sets. Browser-safe: the config arrives already loaded
 * and validated (`loadConfig` in `dsh/node` does that); any object of this shape works.
 */
import type { PipelineLimits } from '../../../machines/callStages.js';
import type { Runtime, RuntimeOptions } from '../createRuntime.js';
import { bashDenyCheck, bashDenyGuard, compileBashPattern } from './bashDenyGuard.js';
import { bashCommandRules } from './commandRules.js';
import { DEFAULT_COMMAND_HOOK_TIMEOUT_MS, installCommandHooks, type CommandHooksConfig, type HookRunner } from './commandHooks.js';
import { permissionRules, type PermissionRule } from './permissionRules.js';
import { planMode } from './planMode.js';
import type { RuleExamples } from './exampleTypes.js';

/** The part of a config that `applyConfig` and `runtimeOptionsFromConfig` read. */
export interface PolicyConfig {
  /** Plan mode on (only read-only tools run). */
  readonly plan?: boolean;
  /** The tools the default question asks about (`configuredPolicies`; default `write`, `edit`, `bash`). */
  readonly askBefore?: readonly string[];
  readonly permissions?: readonly PermissionRule[];
  /**
   * Command rules for `bash`, RE2 patterns over each command the line runs (on a shell parse):
   * `deny` is a guard; `allow` lets a line whose every command matches run without a question,
   * and asks about any other line.
   */
  readonly bash?: { readonly deny?: readonly BashPatternEntry[]; readonly allow?: readonly BashPatternEntry[] };
  readonly concurrency?: number;
  readonly maxInlineBytes?: number;
  /** Most UTF-8 bytes of one prompt, follow-up or steer (see messageLimits.ts). */
  readonly maxMessageBytes?: number;
  readonly timeouts?: { readonly hookMs?: number; readonly approvalMs?: number; readonly abortGraceMs?: number };
  /** Command hooks per stage (commandHooks.ts); installed only with `ApplyConfigOptions.hookRunner`. */
  readonly hooks?: CommandHooksConfig;
  /** The context window (its summariser, when `summarize: 'model'`, is the caller's to attach). */
  readonly context?: { readonly maxChars: number; readonly summarize?: 'model' | 'digest' };
}

/** A bash pattern as a config writes it: the RE2 source, or the source with examples beside it. */
export type BashPatternEntry = string | { readonly pattern: string; readonly examples?: RuleExamples<string>; /** The file it came from (set by the config loader), named when it denies. */ readonly from?: string };

/** The RE2 source of a pattern entry. */
export const patternOf = (entry: BashPatternEntry): string => (typeof entry === 'string' ? entry : entry.pattern);

/** How `applyConfig` installs a config: plan mode on top, the workspace root, the hook runner. */
export interface ApplyConfigOptions {
  /** Plan mode on whatever the config says (`dsh run --plan`). `false` does not turn a config's plan mode off. */
  readonly plan?: boolean;
  /** The workspace root (absolute): absolute path arguments under it match relative globs. */
  readonly root?: string;
  /** Runs the config's command hooks (`createHookRunner` in `dsh/node`); required when the config has any. */
  readonly hookRunner?: HookRunner;
  /** Given to command hooks as `sessionId`. */
  readonly sessionId?: string;
}

/** The names the policies are registered under. */
export const POLICY_NAMES = { planMode: 'dsh:plan-mode', permissions: 'dsh:permissions', bashDeny: 'dsh:bash-deny', bashCommands: 'dsh:bash-commands' } as const;

/**
 * Installs the config's policies on `rt`: plan mode (when on), the bash command rules and the
 * permission rules as pre-execute listeners, ordered before every other pre-execute listener (plan
 * mode first: a permission `allow` must not carry a `write` past it; then the command rules, which
 * ask about a line they cannot fully see before any `allow` can pass it, and let a later `deny`
 * win); the bash deny patterns as a guard.
 * This sets the pre-execute order (`rt.hooks.order`): call it before ordering your own listeners.
 * Returns a function that removes the listeners it installed; the bash deny guard and the guard
 * hooks stay, because
 * guards are append-only (nothing later may undo a guard's deny, SPEC §2.2).
 *
 * @example
 * ```ts
 * const { config, root } = await loadConfig();
 * const rt = createRuntime({ tools: createBuiltinTools({ root }).all, approval, ...runtimeOptionsFromConfig(config) });
 * const remove = applyConfig(rt, config, { root });
 * ```
 */
export function applyConfig(rt: Pick<Runtime, 'hooks' | 'tools'>, config: PolicyConfig, options: ApplyConfigOptions = {}): () => void {
  const removers: Array<() => void> = [];
  const first: string[] = [];
  if (options.plan === true || config.plan === true) {
    const readOnly = (name: string) => rt.tools.list().some((t) => t.name === name && t.readOnly);
    removers.push(
      rt.hooks.on('tools/pre-execute', POLICY_NAMES.planMode, planMode({
        isReadOnly: readOnly,
        readOnlyTools: () => rt.tools.list().filter((t) => t.readOnly).map((t) => t.name),
      })),
    );
    first.push(POLICY_NAMES.planMode);
  }
  const denyEntries = config.bash?.deny ?? [];
  const deny = denyEntries.map(patternOf);
  const allow = (config.bash?.allow ?? []).map(patternOf);
  if (deny.length > 0 || allow.length > 0) {
    const matchers = allow.map((p) => {
      const re = compileBashPattern(p);
      return (s: string) => re.matcher(s).find();
    });
    removers.push(rt.hooks.on('tools/pre-execute', POLICY_NAMES.bashCommands, bashCommandRules({ allow: matchers, deny: bashDenyCheck(denyEntries) })));
    first.push(POLICY_NAMES.bashCommands);
  }
  if (config.permissions && config.permissions.length > 0) {
    removers.push(rt.hooks.on('tools/pre-execute', POLICY_NAMES.permissions, permissionRules({ rules: config.permissions, root: options.root })));
    first.push(POLICY_NAMES.permissions);
  }
  const hooks = config.hooks ?? {};
  if (Object.values(hooks).some((list) => (list?.length ?? 0) > 0)) {
    if (!options.hookRunner) throw new TypeError('applyConfig: the config has command hooks but no hookRunner was given to run them');
    const installed = installCommandHooks(rt, hooks, {
      runner: options.hookRunner,
      root: options.root,
      sessionId: options.sessionId,
      // (The default: `defaultLimits.hookTimeoutMs` of createRuntime.ts, not imported: this entry stays small.)
      stageTimeoutMs: config.timeouts?.hookMs ?? DEFAULT_COMMAND_HOOK_TIMEOUT_MS,
    });
    removers.push(() => installed.remove());
    // Guard hooks (and the result hooks' capture) before everything: no allow may skip them; the
    // pre-execute hooks after the built-in policies, before any listener the caller registered.
    first.unshift(...installed.front);
    first.push(...installed.preExecute);
  }
  if (first.length > 0) rt.hooks.order('tools/pre-execute', first);
  if (deny.length > 0) rt.tools.guard(bashDenyGuard({ patterns: denyEntries }), POLICY_NAMES.bashDeny);
  return () => {
    for (const r of removers) r();
  };
}

/** The `createRuntime` options a config sets (concurrency, `maxInlineBytes`, `maxMessageBytes`, hook/approval/abort timeouts). */
export function runtimeOptionsFromConfig(config: PolicyConfig): Pick<RuntimeOptions, 'concurrency' | 'maxInlineBytes' | 'limits' | 'contextWindow' | 'messageLimits'> {
  const out: Pick<RuntimeOptions, 'concurrency' | 'maxInlineBytes' | 'limits' | 'contextWindow' | 'messageLimits'> = {};
  if (config.maxMessageBytes !== undefined) out.messageLimits = { maxMessageBytes: config.maxMessageBytes };
  if (config.context) out.contextWindow = { maxChars: config.context.maxChars };
  if (config.concurrency !== undefined) out.concurrency = config.concurrency;
  if (config.maxInlineBytes !== undefined) out.maxInlineBytes = config.maxInlineBytes;
  const t = config.timeouts;
  if (t) {
    const limits: { -readonly [K in keyof PipelineLimits]?: number } = {};
    if (t.hookMs !== undefined) limits.hookTimeoutMs = t.hookMs;
    if (t.approvalMs !== undefined) limits.approvalTimeoutMs = t.approvalMs;
    if (t.abortGraceMs !== undefined) limits.abortGraceMs = t.abortGraceMs;
    if (Object.keys(limits).length > 0) out.limits = limits;
  }
  return out;
}
