/**
 * The CLI's default question (issue 32 item 1): ask before a call of a tool that changes files or
 * runs commands (`write`, `edit`, `bash` unless the config's `askBefore` names others), after every
 * rule and hook had its say. It is the last pre-execute listener of the configured policies
 * (`configuredPolicies`), so `dsh run`, `dsh resume`, the inspector page, `dsh policy test` and
 * `dsh policy replay` all judge a call the same way: a rule example's `"allow"` means the call runs
 * without a question in `dsh run` with that config. Browser-safe.
 */
import type { PreExecuteListener } from '../hooks.js';

/** The name it is registered under (results it decided name it: `pre-execute ask by ask-before-changes`). */
export const ASK_BEFORE_CHANGES = 'ask-before-changes';

/** The tools asked about when the config names none: those that change files or run commands. */
export const DEFAULT_ASK_BEFORE: readonly string[] = Object.freeze(['write', 'edit', 'bash']);

/** Which tools `askBeforeChanges` asks about, and which are pre-approved. */
export interface AskBeforeChangesOptions {
  /** The tools to ask about (default {@link DEFAULT_ASK_BEFORE}; `[]` asks about none). */
  readonly tools?: readonly string[];
  /** Tools pre-approved for this run (`--allow TOOL`): not asked about. */
  readonly preApproved?: readonly string[];
}

/** Asks about each call of `tools` (not pre-approved) that nothing before it decided. */
export function askBeforeChanges(options: AskBeforeChangesOptions = {}): PreExecuteListener {
  const asking = new Set(options.tools ?? DEFAULT_ASK_BEFORE);
  options.preApproved?.forEach((t) => asking.delete(t));
  return (call, next) => {
    if (!asking.has(call.toolName)) return next();
    return { kind: 'ask', reason: call.toolName === 'bash' ? 'the model wants to run a command' : 'the model wants to change a file' };
  };
}
