/**
 * Plan mode (SPEC §2.1 names it with the sandbox and the permission gate): a pre-execute listener
 * that lets only read-only tools through (to the next listener) and denies the rest with a reason
 * the model can act on. A tool is read-only when it says so: `defineTool({ readOnly: true })`
 * (the built-ins `read`, `grep` and `glob` do). Being concurrency-safe or idempotent is not
 * enough: `write` of the same content twice is idempotent and still changes a file.
 *
 * It must run before any listener that could `allow` (an allow ends the waterfall), so
 * `applyConfig` registers it first and orders it first.
 */
import type { PreExecuteListener } from '../hooks.js';

/** Which tools plan mode lets run: the read-only ones. */
export interface PlanModeOptions {
  /** True when the named tool is read-only (an unknown name: false). */
  readonly isReadOnly: (toolName: string) => boolean;
  /** Names of read-only tools, listed in the deny reason (e.g. `() => ['read', 'grep', 'glob']`). */
  readonly readOnlyTools?: () => readonly string[];
}

/** The deny reason plan mode gives a tool that is not read-only. */
export function planModeReason(toolName: string, readOnly: readonly string[] = []): string {
  const usable = readOnly.length > 0 ? ` (${readOnly.join(', ')})` : '';
  return (
    `plan mode: "${toolName}" is not run because it can change files or run commands, and plan mode allows only read-only tools${usable}. ` +
    'Use them to investigate, then answer with your plan (the changes you would make, file by file, and the commands you would run); ' +
    'the user will turn plan mode off to carry it out.'
  );
}

/** A pre-execute listener: read-only tools go on to `next()`, every other call is denied. */
export function planMode(options: PlanModeOptions): PreExecuteListener {
  return (call, next) =>
    options.isReadOnly(call.toolName) ? next() : { kind: 'deny', reason: planModeReason(call.toolName, options.readOnlyTools?.() ?? []) };
}
