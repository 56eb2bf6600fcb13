/**
 * What `createRuntime` returns: a session's tools, listeners, log and turns, and the ways to run
 * calls through the pipeline. Types only: browser-safe.
 */
import type { ActorRefFrom } from 'xstate';
import type { PipelineLimits } from '../../machines/callStages.js';
import type { CallStages } from '../../machines/callStages.js';
import type { toolCallMachine } from '../../machines/toolCall.js';
import type { ToolCallRequest, ToolResult } from '../protocol/index.js';
import type { Clock } from './clock.js';
import type { AnyTool } from './defineTool.js';
import type { Guard, HookMap, HookName, ListenerOptions } from './hooks.js';
import type { InspectOption } from './inspection/inspectionEvents.js';
import type { StageListener } from './inspection/stageEvents.js';
import type { SessionLog } from './log/sessionLog.js';
import type { MessageLimits } from './messageLimits.js';
import type { PendingSuspension } from './resume/pendingSuspension.js';
import type { SpillStore } from './spill/spillStore.js';
import type { TurnHandle, TurnOptions } from './turn/types.js';

/** Where a lone call runs, and who watches it. */
export interface RunCallOptions {
  index?: number;
  turnId?: string;
  stepIndex?: number;
  /** XState inspection events of the call's actor (id `call-<index>`, systemId `call`). */
  inspect?: InspectOption;
  /** The call's stage events (`stage/entered`, `stage/exited`), in order. */
  onStage?: StageListener;
}

/** A lone call started by `runtime.runCall`. */
export interface CallHandle {
  readonly actor: ActorRefFrom<typeof toolCallMachine>;
  /** Settles with the frozen result once `tool/result` is in the log. */
  readonly result: Promise<ToolResult>;
  /** Aborts the call (before dispatch: ABORTED_BEFORE_DISPATCH; running: ABORTED). */
  cancel(reason?: string): void;
}

/** A follow-up's options: the latest turn's, with these over them. */
export type FollowUpOptions = Partial<Omit<TurnOptions, 'input'>>;

/**
 * A runtime: one session's log, tools, listeners and guards, and its turns.
 *
 * @example
 * ```ts
 * const rt = createRuntime({ tools: [read] });
 * rt.hooks.on('tools/pre-execute', 'ask-writes', (call) => (call.toolName === 'write' ? { kind: 'ask' } : undefined));
 * const { outcome } = await rt.startTurn({ model, input: 'read a.txt' }).done;
 * ```
 */
export interface Runtime {
  /** The session log: every call, result, step and turn, in order (the single source of truth). */
  readonly log: SessionLog;
  readonly clock: Clock;
  /** The pipeline's stages as the machines call them (what `runCall` and the turns run calls through). */
  readonly pipeline: CallStages;
  /** Hook, approval, grace and per-call deadlines (ms). */
  readonly limits: PipelineLimits;
  /** Most calls of one parallel group running at once. */
  readonly concurrency: number;
  /** The store holding full texts of spilled results (undefined when spilling is off). */
  readonly spillStore: SpillStore | undefined;
  /** How big a prompt, follow-up or steer may be here. */
  readonly messageLimits: MessageLimits;
  /**
   * Runs a turn: steps of model requests and tool calls until the model answers (or it suspends
   * on an approval: outcome `suspended`). Throws while the session has a suspended turn.
   */
  startTurn(options: TurnOptions): TurnHandle;
  /**
   * Queues a message as a new turn after the current one ends (`turn/start` with
   * `followUp.kind: 'follow-up'`), with the latest turn's options unless `options` override them.
   */
  followUp(message: string, options?: FollowUpOptions): TurnHandle;
  /** The suspended turn the session log still waits on (its pending approvals), or undefined. */
  pendingSuspension(): PendingSuspension | undefined;
  /**
   * Continues the session's suspended turn from the log alone, in this process or another: its
   * pending approvals are asked of this runtime's approval service, the same calls go on, and the
   * turn then goes on with `options.model`. Throws when nothing is suspended.
   */
  resumeTurn(options: Omit<TurnOptions, 'input'>): TurnHandle;
  readonly hooks: {
    /** Registers a named listener on a hook; returns its remover. */
    on<K extends HookName>(hook: K, name: string, fn: HookMap[K], opts?: ListenerOptions): () => void;
    /** Fixes the order of a hook's listeners by name. */
    order(hook: HookName, names: readonly string[]): void;
  };
  readonly tools: {
    /**
     * Adds a monotonic guard: a string denies, undefined changes nothing. Append-only: there is
     * no remover, and a call consults the guards registered when it started.
     */
    guard(fn: Guard, name?: string): void;
    /** Adds a tool (replacing one of the same name) for the calls that start from now on. */
    register(tool: AnyTool): void;
    /** Removes a tool by name; true when it was registered. */
    unregister(name: string): boolean;
    /** The registered tools. */
    list(): AnyTool[];
    /** Runs a registry change now if no turn is running, else before the next step's model request. */
    betweenSteps(change: () => void): void;
  };
  /** Runs one call outside any turn: `tool/call` is appended before it runs, `tool/result` after. */
  runCall(request: ToolCallRequest, at?: RunCallOptions): CallHandle;
  /**
   * Hears every call's stage events (`stage/entered` / `stage/exited`, with callId, turnId,
   * stepIndex, toolName, time and outcome), turns and `runCall` alike; returns the remover.
   * With no listener the port is not observed at all.
   */
  onStage(listener: StageListener): () => void;
  /** Registers a disposer (e.g. an MCP connection) that `close()` runs. */
  onClose(fn: () => Promise<void> | void): void;
  /** Runs every disposer once, latest first; failures are recorded as `warning` events, never thrown. */
  close(): Promise<void>;
}
