/**
 * Command hooks (`hooks` in dsh.config.json, docs/hooks.md): external programs at the pipeline's
 * stages. Each gets one JSON document on stdin (the call, frozen; `HookInputSchema`) and answers
 * one on stdout (the schema of its stage). Browser-safe: the process is run by an injected
 * {@link HookRunner} (`createHookRunner` in src/adapters/hooks/ runs it in the `bash` sandbox).
 *
 * - `preExecute`: allow / deny (reason) / ask / next, as a pre-execute listener named
 *   `dsh:hook preExecute[i] <program>`.
 * - `guard`: deny (reason) or next; never allow. The process is asynchronous and the guard stage is
 *   not, so a guard hook runs at the front of the pre-execute layer (before every other listener,
 *   so no `allow` can skip it) and its verdict is held for the call; the guard of the same name
 *   (`dsh:hook guard[i] <program>`, in the append-only guard registry) reads it: a deny ends the
 *   call `GUARD_DENIED`. A denied call passes the rest of pre-execute without a question (nobody
 *   is asked about a call the guard will refuse). A call that reaches the guard without a verdict
 *   (a resumed approval, whose pre-execute is not run again, or listeners reordered around it) is
 *   judged by the hook in the execute stage, before its body: a deny is `GUARD_DENIED` there.
 * - `postExecute`: accept (optionally replacing the display content) / block (feedback).
 * - `result`: observes the final result; its failures are logged and ignored (fail open).
 *
 * Exit codes: 0 and a JSON answer decide; 2 denies (blocks, after execute) with stderr as the
 * reason, as Claude Code does; anything else, a timeout, malformed JSON, an answer of the wrong
 * shape or one that tries to rewrite the arguments fails the call closed with `HOOK_FAILED`
 * naming the hook (SPEC §5). The arguments are frozen (SPEC §2): no answer can change them.
 */
import { ALLOW } from '../pipeline/listenerAnswers.js';
import { ErrorCode, type PreExecuteDecision, type PostExecuteDecision, type ToolResult } from '../../protocol/index.js';
import { errorInfo } from '../toolError.js';
import { MAX_MODEL_FACING_CHARS, visible } from '../../protocol/visibleText.js';
import {
  GuardHookAnswerSchema,
  HOOK_MESSAGE_VERSION,
  PostExecuteHookAnswerSchema,
  PreExecuteHookAnswerSchema,
  rewriteAttempt,
  type GuardHookAnswer,
  type HookInput,
  type HookStage,
  type PostExecuteHookAnswer,
  type PreExecuteHookAnswer,
} from '../../protocol/hookMessages.js';
import type { CallView, ResultDraft } from '../../../machines/callStages.js';
import type { Runtime } from '../createRuntime.js';
import { compileGlob } from './pathGlob.js';
import { normaliseToolPath } from './toolPath.js';

/** A call an example names: a tool and its arguments. */
export interface HookExampleCall {
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
}

/** One hook of the config: a program and its arguments, what it applies to, and its deadline. */
export interface CommandHookEntry {
  /** The argv, program first. A program with a `/` in it is taken from the workspace root. */
  readonly command: readonly string[];
  /** Glob over tool names (default: every tool). */
  readonly tools?: string;
  /** Glob over the `path` argument, relative to the workspace root (a call without one does not match). */
  readonly paths?: string;
  /** How long the hook may take, in ms (default {@link DEFAULT_COMMAND_HOOK_TIMEOUT_MS}, never more than the hook timeout of the pipeline). */
  readonly timeoutMs?: number;
  /** Calls the hook must let pass (`allow`) and must deny (`deny`): checked when the config loads. */
  readonly examples?: { readonly allow?: readonly HookExampleCall[]; readonly deny?: readonly HookExampleCall[] };
}

/** The `hooks` block of a config: one list per stage, run in list order. */
export interface CommandHooksConfig {
  readonly preExecute?: readonly CommandHookEntry[];
  readonly guard?: readonly CommandHookEntry[];
  readonly postExecute?: readonly CommandHookEntry[];
  readonly result?: readonly CommandHookEntry[];
}

/** One run of a hook: its argv, what it reads on stdin, and its deadline. */
export interface HookRunRequest {
  readonly argv: readonly string[];
  readonly stdin: string;
  readonly timeoutMs: number;
}

/** How a hook's run ended: it exited (with its output), or it was killed at its deadline. */
export type HookRunOutcome =
  | {
      readonly kind: 'exited';
      readonly code: number | null;
      readonly signal?: string | null;
      readonly stdout: string;
      readonly stderr: string;
      /** What the runner adds for a person reading the failure (say, what it hid from the hook). */
      readonly note?: string;
    }
  | { readonly kind: 'timeout'; readonly stdout: string; readonly stderr: string };

/**
 * Runs a hook's process and settles once it and everything it started are gone. Rejects only
 * when the process cannot be started (that fails the call closed too).
 */
export type HookRunner = (request: HookRunRequest) => Promise<HookRunOutcome>;

/** A hook's deadline when its entry gives none (the default `timeouts.hookMs` too). */
export const DEFAULT_COMMAND_HOOK_TIMEOUT_MS = 30_000;

/** The listener (and guard) name of a hook: `dsh:hook preExecute[0] .dsh/hooks/check.sh`. */
export function commandHookName(stage: HookStage, index: number, entry: Pick<CommandHookEntry, 'command'>): string {
  return `dsh:hook ${stage}[${index}] ${entry.command[0] ?? '?'}`;
}

/** How a hook is named in a config error: `hooks.preExecute[0] (.dsh/hooks/check.sh)`. */
export function commandHookField(stage: HookStage, index: number, entry: Pick<CommandHookEntry, 'command'>): string {
  return `hooks.${stage}[${index}] (${entry.command[0] ?? '?'})`;
}

/** A hook that did not give a usable answer: the call fails closed (`HOOK_FAILED`). */
export class CommandHookError extends Error {
  override readonly name = 'CommandHookError';
}

export interface CompiledHook {
  readonly stage: HookStage;
  readonly index: number;
  readonly name: string;
  readonly entry: CommandHookEntry;
  /** Whether the hook applies to a call of `tool` with `args`. */
  matches(tool: string, args: unknown): boolean;
}

/** A hook with its matchers compiled; `root` makes absolute path arguments comparable with `paths`. */
export function compileHook(stage: HookStage, index: number, entry: CommandHookEntry, root?: string): CompiledHook {
  const tools = entry.tools === undefined ? undefined : compileGlob(entry.tools);
  const paths = entry.paths === undefined ? undefined : compileGlob(entry.paths);
  return {
    stage,
    index,
    entry,
    name: commandHookName(stage, index, entry),
    matches(tool, args) {
      if (tools && !tools(tool)) return false;
      if (!paths) return true;
      const raw = args !== null && typeof args === 'object' ? (args as { path?: unknown }).path : undefined;
      if (raw === undefined) return false;
      const where = normaliseToolPath(raw, root);
      // A path out of the workspace is the hook's to judge: it is consulted.
      return !where.inside || paths(where.rel);
    },
  };
}

/** Where a call runs, for the hook's input. */
export interface HookCallContext {
  readonly sessionId?: string;
  readonly turnId?: string;
  readonly stepIndex?: number;
  readonly callId: string;
}

/** A hook's text as one line: control characters shown (SPEC §10.6), whitespace runs made one space, cut at `max`. */
function oneLine(s: string, max = 500): string {
  const t = visible(s).replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

/** The hook's answer, or the reason of its exit 2; throws a {@link CommandHookError} for anything else. */
async function consult(hook: CompiledHook, runner: HookRunner, input: HookInput, timeoutMs: number): Promise<{ exit2: string } | { answer: unknown }> {
  let run: HookRunOutcome;
  try {
    run = await runner({ argv: hook.entry.command, stdin: JSON.stringify(input), timeoutMs });
  } catch (e) {
    throw new CommandHookError(`could not be started: ${oneLine(e instanceof Error ? e.message : String(e))}`);
  }
  if (run.kind === 'timeout') throw new CommandHookError(`TIMEOUT: no answer within ${timeoutMs} ms (the hook and every process it started were killed)`);
  if (run.code === 2) return { exit2: oneLine(run.stderr, MAX_MODEL_FACING_CHARS) || `${hook.entry.command[0]} exited with code 2 (no reason on stderr)` };
  if (run.code !== 0) {
    const how = run.code === null ? `was killed by ${run.signal ?? 'a signal'}` : `exited with code ${run.code}`;
    const err = [oneLine(run.stderr, 300), run.note].filter(Boolean).join(' ');
    throw new CommandHookError(`${how}${err ? `: ${err}` : ''}`);
  }
  let answer: unknown;
  try {
    answer = JSON.parse(run.stdout);
  } catch {
    throw new CommandHookError(`exited 0 but its stdout is not one JSON document: ${JSON.stringify(oneLine(run.stdout, 120))}`);
  }
  const rewrite = rewriteAttempt(answer);
  if (rewrite) {
    throw new CommandHookError(
      `tried to rewrite the call's arguments ("${rewrite}" in its answer): arguments are frozen (SPEC §2); a hook can deny, ask or block, never rewrite them`,
    );
  }
  return { answer };
}

function readAnswer<T>(schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> } } }, stage: HookStage, answer: unknown): T {
  const r = schema.safeParse(answer);
  if (r.success) return r.data;
  // A failed parse has an issue; the answers are flat, so its path is one key at most.
  const issue = r.error.issues[0]!;
  // Stryker disable next-line StringLiteral: the answers are flat objects, so a path has one key at most and the separator never shows
  const key = issue.path.map(String).join('.');
  const at = key !== '' ? `${key}: ` : '';
  throw new CommandHookError(`answered an invalid ${stage} answer (${at}${oneLine(issue.message, 200)}); expected {"version":${HOOK_MESSAGE_VERSION},"decision":…} (docs/hooks.md)`);
}

/** The hook's input, as it goes to stdin: JSON leaves out the fields that are undefined (no session, no turn, no args). */
function inputOf(hook: CompiledHook, tool: string, args: unknown, where: HookCallContext, result?: HookInput['result']): HookInput {
  return {
    version: HOOK_MESSAGE_VERSION,
    stage: hook.stage,
    hook: commandHookField(hook.stage, hook.index, hook.entry),
    tool,
    args,
    sessionId: where.sessionId,
    turnId: where.turnId,
    stepIndex: where.stepIndex,
    callId: where.callId,
    result,
  };
}

/** Asks a pre-execute hook about a call. Exit 2 is a deny with stderr as the reason. */
export async function askPreExecuteHook(hook: CompiledHook, runner: HookRunner, tool: string, args: unknown, where: HookCallContext, timeoutMs: number): Promise<PreExecuteHookAnswer> {
  const r = await consult(hook, runner, inputOf(hook, tool, args, where), timeoutMs);
  if ('exit2' in r) return { version: HOOK_MESSAGE_VERSION, decision: 'deny', reason: r.exit2 };
  return readAnswer(PreExecuteHookAnswerSchema, 'preExecute', r.answer);
}

/** Asks a guard hook about a call. Exit 2 is a deny with stderr as the reason. */
export async function askGuardHook(hook: CompiledHook, runner: HookRunner, tool: string, args: unknown, where: HookCallContext, timeoutMs: number): Promise<GuardHookAnswer> {
  const r = await consult(hook, runner, inputOf(hook, tool, args, where), timeoutMs);
  if ('exit2' in r) return { version: HOOK_MESSAGE_VERSION, decision: 'deny', reason: r.exit2 };
  return readAnswer(GuardHookAnswerSchema, 'guard', r.answer);
}

/** Asks a post-execute hook about a result. Exit 2 blocks with stderr as the feedback. */
export async function askPostExecuteHook(hook: CompiledHook, runner: HookRunner, call: CallView, draft: ResultDraft, where: HookCallContext, timeoutMs: number): Promise<PostExecuteHookAnswer> {
  const result = { content: draft.content, value: draft.value, metadata: { ...draft.metadata } };
  const r = await consult(hook, runner, inputOf(hook, call.toolName, call.args, where, result), timeoutMs);
  if ('exit2' in r) return { version: HOOK_MESSAGE_VERSION, decision: 'block', feedback: r.exit2 };
  return readAnswer(PostExecuteHookAnswerSchema, 'postExecute', r.answer);
}

/** How `installCommandHooks` runs the configured hooks: the runner, and where they come from. */
export interface InstallCommandHooksOptions {
  readonly runner: HookRunner;
  /** The workspace root (absolute): absolute path arguments under it match relative `paths` globs. */
  readonly root?: string;
  /** Given to every hook as `sessionId`. */
  readonly sessionId?: string;
  /** The pipeline's hook timeout (`limits.hookTimeoutMs`): a hook's own timeout is capped to it. */
  readonly stageTimeoutMs?: number;
}

/** What {@link installCommandHooks} registered: the pre-execute names to order, and a remover. */
export interface InstalledCommandHooks {
  /** Pre-execute listeners that must run before every other one (the guard hooks' evaluation, the result hooks' capture). */
  readonly front: readonly string[];
  /** The pre-execute hooks, in config order (after the config's built-in policies). */
  readonly preExecute: readonly string[];
  /** Removes the pre-execute and post-execute hooks and the result observers; guard hooks stay (guards are append-only, SPEC §2.2). */
  remove(): void;
}

/**
 * Registers the config's command hooks on `rt`. It does not order them: `applyConfig` puts
 * `front` first and `preExecute` after its built-in policies (see the module note).
 */
export function installCommandHooks(rt: Pick<Runtime, 'hooks' | 'tools'>, hooks: CommandHooksConfig, options: InstallCommandHooksOptions): InstalledCommandHooks {
  const { runner, root } = options;
  const limit = (e: CommandHookEntry) => Math.min(e.timeoutMs ?? DEFAULT_COMMAND_HOOK_TIMEOUT_MS, options.stageTimeoutMs ?? Number.POSITIVE_INFINITY);
  const where = (c: { callId: string; turnId?: string; stepIndex?: number }): HookCallContext => ({ callId: c.callId, sessionId: options.sessionId, turnId: c.turnId, stepIndex: c.stepIndex });
  const removers: Array<() => void> = [];
  const front: string[] = [];
  const pre: string[] = [];

  (hooks.guard ?? []).forEach((entry, i) => {
    const hook = compileHook('guard', i, entry, root);
    // The verdict of this hook for each call (a call's view is one frozen object from start to end).
    const verdicts = new WeakMap<CallView, GuardHookAnswer>();
    // Not removable, like every guard (SPEC §2.2): its pre-execute and execute parts stay with it.
    rt.hooks.on('tools/pre-execute', hook.name, (call, next) => {
        // Not its call: no verdict, and the guard stage (which asks `matches` too) lets it pass.
        if (!hook.matches(call.toolName, call.args)) return next();
        return askGuardHook(hook, runner, call.toolName, call.args, where(call), limit(entry)).then((answer) => {
          verdicts.set(call, answer);
          // A call the guard will deny is asked about by nobody: straight on to the guard.
          return answer.decision === 'deny' ? ALLOW : undefined;
        });
      });
    front.push(hook.name);
    // Calls that reached the guard stage without a verdict: a resumed approval (whose pre-execute
    // decision is the logged `ask`, its listeners not run again), or listeners reordered around
    // this one. The hook judges them in the execute stage, before the body.
    const deferred = new WeakSet<CallView>();
    rt.tools.guard((call) => {
      const v = verdicts.get(call);
      if (v === undefined) {
        if (hook.matches(call.toolName, call.args)) deferred.add(call);
        return undefined;
      }
      return v.decision === 'deny' ? { reason: guardReason(v.reason), rule: commandHookField('guard', i, entry) } : undefined;
    }, hook.name);
    const guardReason = (reason: string) => `${reason} (guard hook ${commandHookField('guard', i, entry)})`;
    rt.hooks.on('tools/execute', hook.name, async (call, _exec, next) => {
      if (!deferred.has(call)) return next();
      // A failure throws: the runtime fails the call closed (HOOK_FAILED naming this hook) and logs it.
      const a = await askGuardHook(hook, runner, call.toolName, call.args, where(call), limit(entry));
      if (a.decision === 'deny') return { ok: false, error: errorInfo(ErrorCode.GUARD_DENIED, `denied by guard "${hook.name}": ${guardReason(a.reason)}`) };
      return next();
    });
  });

  // Result observers see only the result: the call's arguments and place are kept from its start.
  const resultHooks = (hooks.result ?? []).map((entry, i) => compileHook('result', i, entry, root));
  if (resultHooks.length > 0) {
    const calls = new Map<string, CallView>();
    const capture = 'dsh:hook result (call capture)';
    removers.push(
      rt.hooks.on('tools/pre-execute', capture, (call, next) => {
        calls.set(call.callId, call);
        return next();
      }),
    );
    // First of all: a call that an earlier listener decides (a guard hook's deny) is captured too.
    front.unshift(capture);
    // And at the guard stage, for a call whose pre-execute is not run again (a resumed approval).
    let removed = false;
    rt.tools.guard((call) => {
      // Stryker disable next-line ConditionalExpression: after the remover no result hook reads the map; the flag only stops it growing (the guard stays)
      if (!removed) calls.set(call.callId, call);
      return undefined;
    }, capture);
    // Stryker disable next-line BlockStatement: after the remover no result hook reads the map; this only stops it growing (the guard stays)
    removers.push(() => {
      // Stryker disable next-line BooleanLiteral: after the remover no result hook reads the map; the flag only stops it growing
      removed = true;
      calls.clear();
    });
    const lastHook = resultHooks[resultHooks.length - 1];
    for (const hook of resultHooks) {
      removers.push(
        rt.hooks.on('tools/result', hook.name, (result: ToolResult) => {
          const call = calls.get(result.callId);
          if (hook === lastHook) calls.delete(result.callId);
          if (!hook.matches(result.toolName, call?.args)) return;
          const final = {
            isError: result.isError,
            content: result.content,
            value: result.value,
            ...(result.error ? { error: { name: result.error.name, code: result.error.code, message: result.error.message } } : {}),
            ...(result.metadata ? { metadata: { ...result.metadata } } : {}),
          };
          const input = inputOf(hook, result.toolName, call?.args, where(call ?? { callId: result.callId }), final);
          // Fails open: a rejection is logged (`hook/failed`, failed: open) by the runtime, nothing else.
          return consult(hook, runner, input, hook.entry.timeoutMs ?? DEFAULT_COMMAND_HOOK_TIMEOUT_MS).then((r) => {
            if ('exit2' in r) throw new CommandHookError(`exited with code 2 (a result observer cannot block): ${r.exit2}`);
          }) as unknown as void;
        }),
      );
    }
  }

  (hooks.preExecute ?? []).forEach((entry, i) => {
    const hook = compileHook('preExecute', i, entry, root);
    const field = commandHookField('preExecute', i, entry);
    removers.push(
      rt.hooks.on('tools/pre-execute', hook.name, (call) => {
        if (!hook.matches(call.toolName, call.args)) return undefined;
        return askPreExecuteHook(hook, runner, call.toolName, call.args, where(call), limit(entry)).then((a): PreExecuteDecision | undefined => {
          // Its own answer, never the chain's ALLOW: the result names the hook that let it run.
          if (a.decision === 'allow') return { kind: 'allow', rule: field };
          if (a.decision === 'deny') return { kind: 'deny', reason: `${a.reason} (hook ${field})`, rule: field };
          if (a.decision === 'ask') return { kind: 'ask', reason: a.reason ?? `hook ${field} asks`, rule: field };
          // `next`: hand over.
          return undefined;
        });
      }),
    );
    pre.push(hook.name);
  });

  (hooks.postExecute ?? []).forEach((entry, i) => {
    const hook = compileHook('postExecute', i, entry, root);
    removers.push(
      rt.hooks.on(
        'tools/post-execute',
        hook.name,
        (draft, call) =>
          askPostExecuteHook(hook, runner, call, draft, where(call), limit(entry)).then((a): PostExecuteDecision | undefined => {
            if (a.decision === 'block') return { kind: 'block', feedback: a.feedback };
            // Stryker disable next-line ConditionalExpression: an accept without content keeps the draft as it is and records no decision, like handing over
            return a.content !== undefined ? { kind: 'accept', content: a.content } : undefined;
          }),
        { appliesTo: (_draft, call) => hook.matches(call.toolName, call.args) },
      ),
    );
  });

  return {
    front,
    preExecute: pre,
    remove() {
      // Stryker disable next-line MethodExpression: each remover takes away its own listener; the order they go in changes nothing
      for (const r of removers.reverse()) r();
    },
  };
}
