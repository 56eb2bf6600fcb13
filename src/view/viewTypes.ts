/**
 * The values a session view holds (src/view/sessionView.ts): the session's turns, their steps and
 * the text streamed so far, each call with its stage, approval, progress and result. Every value is
 * frozen, and a change makes new objects only along the path to what changed, so a selector that
 * compares by reference (`useSyncExternalStore`, `@xstate/react`'s `useSelector`, Svelte's stores)
 * re-renders exactly the parts that changed. Types only: browser-safe.
 */
import type { ApprovalPreview, ExecutionMode, ToolResult, TurnOutcome } from '../protocol/index.js';
import type { CallStageName } from '../runtime/inspection/stageEvents.js';

/**
 * Where a turn is (for the turns the view started, from their lifecycle machine). `queued`: asked
 * for, waiting for the turns before it; `running`; `suspending`: an approval answered "decide later"
 * and the turn waits for its step to be quiet; `cancelling`: a cancel was asked for and the turn is
 * winding down; `suspended`: it waits for approvals that
 * outlive the process (`resume` continues it); `ended`: `outcome` says how.
 */
export type SessionTurnState = 'queued' | 'running' | 'suspending' | 'cancelling' | 'suspended' | 'ended';

/**
 * Where a call is: a pipeline stage of its call actor (the stage stream), `queued` (logged, not
 * started: an exclusive call waiting for the calls before it, or a call the page has not seen start),
 * `settled` (its result is ready and waits for the calls before it to commit, SPEC §3), or `done`
 * (its `tool/result` is in the log: `result`).
 */
export type SessionCallStage = CallStageName | 'queued' | 'settled' | 'done';

/** A question a call asks before it may run (its `tool/approval-request`). */
export interface SessionApproval {
  /** The call's key (`turnId/stepIndex/callId`): what `approve`/`deny` take. */
  readonly id: string;
  readonly turnId: string;
  readonly stepIndex: number;
  readonly callId: string;
  readonly toolName: string;
  /** The call's arguments (as its `args`). */
  readonly args: unknown;
  /** Why it asks (the pre-execute listener's reason). */
  readonly reason?: string;
  /** What the call would change (a diff, a command), when the approval request carries one. */
  readonly preview?: ApprovalPreview;
  /**
   * True while this process waits for the answer (the view's approval inbox holds the question):
   * `approve`/`deny` answer it. False for a question of a suspended turn until it is resumed.
   */
  readonly answerable: boolean;
  /** `seq` of the `tool/approval-request`. */
  readonly seq: number;
}

/** The latest `tool/progress` of a running call, with its output so far (the tail, bounded). */
export interface CallProgress {
  readonly message?: string;
  readonly progress?: number;
  readonly total?: number;
  /** Output reported so far (its last `PROGRESS_OUTPUT_CHARS` characters). */
  readonly output: string;
  /** Progress events seen. */
  readonly events: number;
}

/** One tool call of a step, in the model's order. */
export interface SessionCall {
  /** `turnId/stepIndex/callId`. */
  readonly key: string;
  readonly turnId: string;
  readonly stepIndex: number;
  readonly callId: string;
  /** Position in the step's batch: the model's order. */
  readonly index: number;
  readonly toolName: string;
  /** The arguments as a value (the model's JSON text parsed, within the argument limits; the text itself when it does not parse). */
  readonly args: unknown;
  /** The arguments exactly as the model sent them (its `tool/call` input: raw JSON text when it sent text). */
  readonly input: unknown;
  readonly executionMode: ExecutionMode;
  readonly stage: SessionCallStage;
  /** The question it waits on (absent once answered). */
  readonly approval?: SessionApproval;
  /** How an approval was answered (`allowed-once`, `denied`, `remembered`, …), once it was. */
  readonly approvalAnswer?: string;
  readonly progress?: CallProgress;
  /** The committed result (stage `done`). */
  readonly result?: ToolResult;
}

/** One model request of a turn and the calls it asked for. */
export interface SessionStep {
  readonly stepIndex: number;
  /** `suspended`: the step waits for approvals (its turn is suspended). */
  readonly state: 'running' | 'suspended' | 'ended';
  /** The model's answer text of this step so far (streamed; the log's text once the step ended). */
  readonly text: string;
  readonly reasoning: string;
  readonly calls: readonly SessionCall[];
  /** The model's finish reason, once the step ended. */
  readonly finishReason?: string;
  /** Failed requests of this step (`agent/request-error`), by their message. */
  readonly requestErrors: readonly string[];
}

/** A steering message sent to a turn. */
export interface SessionSteer {
  readonly text: string;
  /**
   * `waiting`: sent, waiting for the turn's next model request; `delivered`: in the prompt of step
   * `stepIndex` (its `user/steer`); `follow-up`: it came too late and became turn `turnId`.
   */
  readonly status: 'waiting' | 'delivered' | 'follow-up';
  readonly stepIndex?: number;
  readonly turnId?: string;
}

/** One turn of the session. */
export interface SessionTurn {
  readonly turnId: string;
  /** The user's request that opened it. */
  readonly input: string;
  readonly followUp?: { readonly kind: 'follow-up' | 'late-steer'; readonly after: string };
  readonly state: SessionTurnState;
  /** How it ended (state `ended`). */
  readonly outcome?: TurnOutcome;
  readonly error?: string;
  readonly steps: readonly SessionStep[];
  /** Every call of every step, steps in order and each step's calls in the model's order. */
  readonly calls: readonly SessionCall[];
  readonly steers: readonly SessionSteer[];
  /** The model's final answer (the last step's text) once the turn ended. */
  readonly answer?: string;
}

/** The whole session as the view sees it. */
export interface SessionSnapshot {
  /** Turns in the order they were asked for (queued ones last). */
  readonly turns: readonly SessionTurn[];
  /** Every question waiting for an answer, oldest first (the same objects as the calls' `approval`). */
  readonly approvals: readonly SessionApproval[];
  /** The suspended turn the session waits on (resume it), if any. */
  readonly suspendedTurnId?: string;
  /** The turn that runs now (running, suspending or cancelling), if any. */
  readonly activeTurnId?: string;
  /** `seq` of the last log event the view has applied. */
  readonly lastSeq: number;
}
