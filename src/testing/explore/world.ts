/**
 * What `explore` hands the user's runtime factory, and the shapes a run is judged on. Types only.
 */
import type { InspectionEvent } from 'xstate';
import type { LogEvent } from '../../protocol/index.js';
import type { ManualClock } from '../../runtime/clock.js';
import type { createRuntime, RuntimeOptions } from '../../runtime/createRuntime.js';
import type { ListenerWrapper } from '../../runtime/hooks.js';
import type { SessionLog } from '../../runtime/log/sessionLog.js';
import type { ApprovalService } from '../../runtime/pipeline/approvalService.js';
import type { TurnOptions, TurnResult } from '../../runtime/turn/types.js';

/**
 * The parts of the world `explore` plays: pass them to `createRuntime` (`{ ...world, tools }`).
 * The log decides where a crash falls, the clock when deadlines pass, the approval service what a
 * person answers, `wrapListener` whether a listener or guard fails; `inspect` tells `explore`
 * which machine states the run reached.
 */
export interface ExploreWorld {
  readonly log: SessionLog;
  readonly clock: ManualClock;
  readonly approval: ApprovalService;
  /** The inspection the explorer watches the run through (give it to `createRuntime({ inspect })`). */
  readonly inspect: (event: InspectionEvent) => void;
  /** Wraps each listener and guard as it is registered, so a path can make one fail. */
  readonly wrapListener: ListenerWrapper;
  /** Which run this is (1, 2, …): key state that lives outside the session (a payment provider's ledger) by it. */
  readonly run: number;
  /** Which process of the run (1, then 2 after a crash or a suspension, …). */
  readonly process: number;
}

/** Builds the agent under test, fresh for every process of every run, on the world it is given. */
export type RuntimeFactory = (world: ExploreWorld) => ReturnType<typeof createRuntime>;

/** The options a test may leave to `explore`: everything in `RuntimeOptions` the world provides. */
export type WorldOptions = Pick<RuntimeOptions, 'log' | 'clock' | 'approval' | 'inspect' | 'wrapListener'>;

/** What an error `explore` injects says: the SPEC oracle does not count such a failure against the agent. */
export const INJECTED_BY_EXPLORE = 'injected by explore';

/** The turn each run starts: its options (a fresh model per process, see `explore`), or a function that makes them. */
export type ExploredTurn = TurnOptions | (() => TurnOptions);

/** One body run (or one body `explore` stood in for), as the oracle and the user's invariants see it. */
export interface BodyRecord {
  readonly callId: string;
  readonly toolName: string;
  /** The `seq` of the `tool/call` the body ran for. */
  readonly callSeq: number;
  /** The process (1, 2, …) that ran it. */
  readonly process: number;
  /** 1, or more when a retry wrapper ran the body again on purpose. */
  readonly attempt: number;
  readonly args: unknown;
  /** Whether the arguments the body got were deeply frozen (SPEC §2). */
  readonly argsFrozen: boolean;
  /** How `explore` let it finish: `run` (as it does), `fail` (it threw), `slow` (its answer came after the deadline), `cancel` (the turn was cancelled while it ran). */
  readonly mode: 'run' | 'fail' | 'slow' | 'cancel';
  /** The user's body was called (false when `explore` made it fail without running it). */
  readonly ran: boolean;
  /** The log's last `seq` when the body settled; undefined: it never settled. */
  settledAtSeq?: number;
  /** How the body itself settled. */
  outcome?: { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };
}

/** What one explored run did: the material of every verdict. */
export interface ExploredRun {
  /** The run's number, as its world had it. */
  readonly index: number;
  /** The session as a reader finds it afterwards: what each process made durable, in order. */
  readonly events: readonly LogEvent[];
  /** Every body started (or stood in for), in order. */
  readonly bodies: readonly BodyRecord[];
  /** How many times each tool's `finalizeContent` was called (tools that define one). */
  readonly finalized: Readonly<Record<string, number>>;
  /** How many processes the run took (a crash, or a suspension, starts the next). */
  readonly processes: number;
  /** The `seq`s of events lost by a crash (appended but never durable). */
  readonly lost: readonly number[];
  /** How the last turn ended (undefined: it never ended, see `stuck`). */
  readonly result?: TurnResult;
  /** Why the run could not go on, if it could not (the agent waited on nothing `explore` controls). */
  readonly stuck?: string;
  /** The run's steps, as a person reads them. */
  readonly steps: readonly string[];
}

/** A user invariant: true (or undefined) when the run is fine, else false or a message saying what is wrong. */
export type Invariant = (run: ExploredRun) => boolean | string | void;
