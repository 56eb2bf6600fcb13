/**
 * Hooks typed by tool: `forTool(read, (call, next) => …)` is a pre-execute listener that applies
 * only to calls of `read` and sees `call.args` as read's validated input type (deep-readonly, as
 * the args are deep-frozen), with no cast. Calls of other tools go straight to `next()` (or are
 * left alone, for post-execute listeners and guards).
 *
 *   rt.hooks.on('tools/pre-execute', 'no-abs', forTool(read, (call, next) =>
 *     call.args.path?.startsWith('/') ? { kind: 'deny', reason: 'relative paths only' } : next()));
 *
 * A call is matched by tool name (a runtime holds one tool per name), so pass the very tool
 * object the runtime was given.
 */
import type { z } from 'zod';
import type { PostExecuteDecision, PreExecuteDecision } from '../protocol/index.js';
import type { CallView, ResultDraft, SyncOrAsync } from '../../machines/callStages.js';
import type { ToolDefinition } from './defineTool.js';
import type { Guard, PostExecuteListener, PreExecuteListener } from './hooks.js';

/** `T` with every property, at every depth, read-only (what a deep-frozen value is). */
export type DeepReadonly<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends ReadonlyArray<infer E>
    ? ReadonlyArray<DeepReadonly<E>>
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T;

/** A call of one known tool: `args` has the tool's validated input type. */
export interface TypedCallView<A> extends Omit<CallView, 'args'> {
  readonly args: DeepReadonly<A>;
}

/** The call type of a listener for `tool`. */
export type CallOf<T> = T extends ToolDefinition<infer I, unknown> ? TypedCallView<z.output<I>> : never;

type AnyDef<I extends z.ZodType> = ToolDefinition<I, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * A pre-execute listener for one tool; other tools' calls are handed on with `next()`.
 *
 * @example
 * ```ts
 * rt.hooks.on('tools/pre-execute', 'no-absolute-paths', forTool(read, (call, next) =>
 *   call.args.path.startsWith('/') ? { kind: 'deny', reason: 'absolute paths are off limits' } : next(),
 * ));
 * ```
 */
export function forTool<I extends z.ZodType>(
  tool: AnyDef<I>,
  listener: (call: TypedCallView<z.output<I>>, next: () => SyncOrAsync<PreExecuteDecision>) => SyncOrAsync<PreExecuteDecision | void>,
): PreExecuteListener {
  return (call, next) => (call.toolName === tool.name ? listener(call as TypedCallView<z.output<I>>, next) : next());
}

/** A post-execute listener for one tool; other tools' results are left as they are. */
export function forToolResult<I extends z.ZodType>(
  tool: AnyDef<I>,
  listener: (draft: ResultDraft, call: TypedCallView<z.output<I>>) => SyncOrAsync<PostExecuteDecision | void>,
): PostExecuteListener {
  return (draft, call) => (call.toolName === tool.name ? listener(draft, call as TypedCallView<z.output<I>>) : undefined);
}

/**
 * A guard for one tool (a string denies); other tools' calls pass.
 *
 * @example
 * ```ts
 * rt.tools.guard(guardFor(bash, (call) => (call.args.command.includes('curl') ? 'no network' : undefined)));
 * ```
 */
export function guardFor<I extends z.ZodType>(tool: AnyDef<I>, guard: (call: TypedCallView<z.output<I>>) => string | undefined): Guard {
  return (call) => (call.toolName === tool.name ? guard(call as TypedCallView<z.output<I>>) : undefined);
}
