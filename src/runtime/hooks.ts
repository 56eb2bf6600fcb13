import type { PostExecuteDecision, PreExecuteDecision, ToolResult } from '../protocol/index.js';
import type { ExecContext } from './defineTool.js';
import type { CallView, ExecOutcome, ResultDraft, SyncOrAsync } from '../../machines/callStages.js';

/** A pre-execute listener: return a decision, or call `next()` to hand over (SPEC §2.1). */
export type PreExecuteListener = (
  call: CallView,
  next: () => SyncOrAsync<PreExecuteDecision>,
) => SyncOrAsync<PreExecuteDecision | void>;

/** An around-wrapper of the tool body; `next(exec)` may replace `exec.signal` but never remove it. */
export type ExecuteWrapper = (
  call: CallView,
  exec: ExecContext,
  next: (exec?: Partial<Pick<ExecContext, 'signal' | 'attempt'>>) => Promise<ExecOutcome>,
) => Promise<ExecOutcome>;

/** A post-execute listener sees the result so far (with earlier listeners' rewrites). */
export type PostExecuteListener = (draft: ResultDraft, call: CallView) => SyncOrAsync<PostExecuteDecision | void>;

/** An observer of frozen, final results: it can look, nothing else. */
export type ResultObserver = (result: ToolResult) => void;

/**
 * The monotonic guard: a string denies with that reason (or `{ reason, rule }`, naming the rule
 * that denied for the result's `decision`); `undefined` changes nothing. There is no allow.
 */
export type Guard = (call: CallView) => string | GuardDenial | undefined;

/** A guard's denial that names its rule (`bash.deny[0] /^rm\s/`); the model sees only `reason`. */
export interface GuardDenial {
  readonly reason: string;
  readonly rule?: string;
}

/** The hooks of the pipeline and the listener type each takes. */
export interface HookMap {
  'tools/pre-execute': PreExecuteListener;
  'tools/execute': ExecuteWrapper;
  'tools/post-execute': PostExecuteListener;
  'tools/result': ResultObserver;
}
/** The name of a pipeline hook: `tools/pre-execute`, `tools/execute`, `tools/post-execute` or `tools/result`. */
export type HookName = keyof HookMap;

/**
 * Sees every listener and guard as it is registered (`hooks.on`, `tools.guard`) and returns what
 * runs in its place: how a test harness (dsh/testing's `explore`) makes a listener fail on a path.
 *
 * @typeParam F - the listener's or guard's own function type, which the wrapper keeps.
 */
export type ListenerWrapper = <F extends (...args: never[]) => unknown>(hook: HookName | 'tools/guard', name: string, fn: F) => F;

/** A registered listener with its name (the name a `HOOK_FAILED` result reports). */
export interface Named<F> {
  readonly name: string;
  readonly fn: F;
  readonly last?: boolean;
  /** A cheap test of whether the listener has anything to do with a result (post-execute only). */
  readonly appliesTo?: (draft: ResultDraft, call: CallView) => boolean;
}

/** Options of `hooks.on`: where the listener goes and, for post-execute, which results it applies to. */
export interface ListenerOptions {
  /** Keep this listener after every listener without the flag. */
  last?: boolean;
  /**
   * Post-execute only: a cheap, synchronous test of whether the listener has anything to do with a
   * result. When no listener applies, the call skips the `postExecute` stage altogether.
   */
  appliesTo?: (draft: ResultDraft, call: CallView) => boolean;
}

/**
 * Named listeners per hook. Order is registration order unless `order(hook, names)` fixes it:
 * names listed there come first in that order, the rest keep their registration order after them.
 */
export class HookRegistry {
  private readonly listeners: { [K in HookName]: Array<Named<HookMap[K]>> } = {
    'tools/pre-execute': [],
    'tools/execute': [],
    'tools/post-execute': [],
    'tools/result': [],
  };
  private readonly explicitOrder: Partial<Record<HookName, readonly string[]>> = {};
  private readonly sorted: Partial<{ [K in HookName]: ReadonlyArray<Named<HookMap[K]>> }> = {};

  /**
   * Registers a named listener; returns a function that removes it. `last: true` keeps it after
   * every listener without that flag (the spill policy must see the content other listeners made).
   */
  on<K extends HookName>(hook: K, name: string, fn: HookMap[K], options: ListenerOptions = {}): () => void {
    const list = this.listeners[hook] as Array<Named<HookMap[K]>>;
    if (list.some((l) => l.name === name)) throw new Error(`${hook}: a listener named "${name}" is already registered`);
    const entry = Object.freeze({ name, fn, last: options.last === true, appliesTo: options.appliesTo });
    list.push(entry);
    delete this.sorted[hook];
    return () => {
      const i = list.indexOf(entry);
      if (i >= 0) list.splice(i, 1);
      delete this.sorted[hook];
    };
  }

  /** Fixes the order of a hook's listeners by name (SPEC: the pre-execute layer is reorderable). */
  order(hook: HookName, names: readonly string[]): void {
    this.explicitOrder[hook] = [...names];
    delete this.sorted[hook];
  }

  /** The listeners of a hook in the order they run. */
  list<K extends HookName>(hook: K): ReadonlyArray<Named<HookMap[K]>> {
    const cached = this.sorted[hook];
    if (cached) return cached as ReadonlyArray<Named<HookMap[K]>>;
    const list = this.listeners[hook] as Array<Named<HookMap[K]>>;
    const order = this.explicitOrder[hook];
    // Stable: unflagged listeners keep their order, then the `last` ones in theirs.
    let result: Array<Named<HookMap[K]>> = [...list.filter((l) => !l.last), ...list.filter((l) => l.last)];
    if (order) {
      const rank = new Map(order.map((n, i) => [n, i]));
      result = result
        .map((l, i) => ({ l, key: rank.has(l.name) ? rank.get(l.name)! : order.length + i }))
        .sort((a, b) => a.key - b.key)
        .map((x) => x.l);
    }
    const frozen = Object.freeze(result);
    (this.sorted as Record<string, unknown>)[hook] = frozen;
    return frozen;
  }
}

/**
 * Guards run in registration order; every one is consulted until one denies. Append-only: there
 * is no remover (SPEC §2.2: nothing later can undo a guard's deny, and removing the guard that
 * would deny is undoing it). The list is copy-on-write, so a call holds the guards as they were
 * when it started while later registrations only reach later calls.
 */
export class GuardRegistry {
  private guards: ReadonlyArray<Named<Guard>> = Object.freeze([]);
  private anon = 0;
  /** Adds a guard; it applies to calls that start from now on (SPEC §8.18). There is no remover. */
  add(fn: Guard, name?: string): void {
    if (typeof fn !== 'function') throw new TypeError('a guard is a function (call) => string | undefined');
    const entry = Object.freeze({ name: name ?? (fn.name || `guard#${++this.anon}`), fn });
    this.guards = Object.freeze([...this.guards, entry]);
  }
  /** The guards now, frozen: this array never changes, later guards make a new one. */
  list(): ReadonlyArray<Named<Guard>> {
    return this.guards;
  }
}
