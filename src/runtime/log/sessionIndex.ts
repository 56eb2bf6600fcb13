/**
 * What the runtime needs to know about a session's history, kept as events arrive (issue 16.1) so
 * that nothing per step or per turn scans the log: the prompt projection, the open work (calls
 * without a result, steps and turns not ended), how many turns have started, and the
 * `allowed-always` approvals to remember. A log's `index` (sessionLog.ts) is built once per log (one pass
 * over what the log holds) and kept up to date through the log's subscription.
 *
 * It is also what a checkpoint records (`toCheckpoint` / `fromCheckpoint`): a log resumed from a
 * checkpoint holds only the events after it, and its index comes from the checkpoint. Browser-safe.
 */
import * as z from 'zod';
import {
  ApprovalAnswerEvent,
  LogEventSchema,
  ToolCallEvent,
  type LogEvent,
  type LogEventOf,
  type NewLogEvent,
} from '../../protocol/index.js';
import { isPromptProjectionState, PromptProjection } from '../projection/promptState.js';

/** Format of `session/checkpoint` state this code writes and reads. */
export const CHECKPOINT_VERSION = 1;

/** Which open work `closeOpenWork` closes: one turn's, or every turn's. */
export interface OpenWorkScope {
  /** Only this turn (default: every turn). */
  turnId?: string;
  /** Only this step of `turnId`. */
  stepIndex?: number;
}

export interface OpenWork {
  /** Calls without a result, in log order. */
  calls: LogEventOf<'tool/call'>[];
  /** Steps without `step/end`, in log order, with how many calls each made. */
  steps: Array<{ turnId: string; stepIndex: number; toolCalls: number }>;
  /** Turns without `turn/end`, in log order, with how many steps each started (none when the scope names a step). */
  turns: Array<{ turnId: string; steps: number }>;
}

/** A step's key in maps of steps: its turn and its index. */
export const stepKey = (turnId: string, stepIndex: number) => `${turnId}\u0000${stepIndex}`;
/** Where a call is: its turn, step and id (as the approval stage matches them). */
const placeKey = (e: { turnId?: string; stepIndex?: number; callId: string }) => `${e.turnId ?? ''}\u0000${e.stepIndex ?? ''}\u0000${e.callId}`;

export class SessionIndex {
  readonly prompt: PromptProjection;
  private seq = 0;
  private turnStarts = 0;
  private readonly calls = new Map<number, LogEventOf<'tool/call'>>();
  private readonly callsByPlace = new Map<string, LogEventOf<'tool/call'>>();
  private readonly steps = new Map<string, { turnId: string; stepIndex: number; toolCalls: number }>();
  private readonly turns = new Map<string, { turnId: string; steps: number }>();
  /** The open step the last `tool/call` counted in (only ever one `steps` holds; cleared on `step/end`). */
  private lastStep: { turnId: string; stepIndex: number; toolCalls: number } | undefined;
  /** `allowed-always` answers with their calls: call, answer, call, answer, … */
  private readonly approvals: LogEvent[] = [];
  /** A `turn/suspended` was seen: only then is the log searched for a pending suspension. */
  sawSuspension = false;
  /**
   * The events a suspension still pending at the checkpoint this index came from is read from
   * (resume/pendingSuspension.ts): they are before the checkpoint, so not in a log resumed from it.
   */
  suspension: readonly LogEvent[] = [];
  /** Outcomes of ended turns that did not complete (a folded turn's digest names them). */
  private readonly outcomes = new Map<string, string>();

  constructor(prompt = new PromptProjection()) {
    this.prompt = prompt;
  }

  /** `seq` of the last event folded in. */
  get lastSeq(): number {
    return this.seq;
  }

  /** How many turns have started in the session. */
  get turnCount(): number {
    return this.turnStarts;
  }

  apply(e: LogEvent): void {
    this.seq = e.seq;
    this.prompt.apply(e);
    switch (e.type) {
      case 'turn/start':
        this.turnStarts++;
        this.turns.set(e.turnId, { turnId: e.turnId, steps: this.turns.get(e.turnId)?.steps ?? 0 });
        break;
      case 'turn/end':
        this.turns.delete(e.turnId);
        if (e.outcome !== 'completed') this.outcomes.set(e.turnId, e.outcome);
        break;
      case 'step/start': {
        const turn = this.turns.get(e.turnId);
        if (turn) turn.steps++;
        const key = stepKey(e.turnId, e.stepIndex);
        if (!this.steps.has(key)) this.steps.set(key, { turnId: e.turnId, stepIndex: e.stepIndex, toolCalls: 0 });
        break;
      }
      case 'step/end':
        this.steps.delete(stepKey(e.turnId, e.stepIndex));
        this.lastStep = undefined;
        break;
      case 'tool/call': {
        this.calls.set(e.seq, e);
        this.callsByPlace.set(placeKey(e), e);
        if (e.turnId !== undefined && e.stepIndex !== undefined) {
          // The calls of a step come together: the step of the last call is looked up only once.
          let step = this.lastStep;
          if (step?.turnId !== e.turnId || step.stepIndex !== e.stepIndex) this.lastStep = step = this.steps.get(stepKey(e.turnId, e.stepIndex));
          if (step) step.toolCalls++;
        }
        break;
      }
      case 'tool/result':
        for (const seq of e.sourceEventSeqs) {
          const call = this.calls.get(seq);
          if (!call) continue;
          this.calls.delete(seq);
          const place = placeKey(call);
          if (this.callsByPlace.get(place) === call) this.callsByPlace.delete(place);
        }
        break;
      case 'turn/suspended':
        this.sawSuspension = true;
        break;
      case 'tool/approval-answer':
        if (e.answer === 'allowed-always') {
          const call = this.callsByPlace.get(placeKey(e));
          if (call) this.approvals.push(call, e);
        }
        break;
      default:
        break;
    }
  }

  /** What is open in `scope` (a copy: closing it appends to the log, which updates the index). */
  openWork(scope: OpenWorkScope = {}): OpenWork {
    const inTurn = (turnId: string | undefined) => scope.turnId === undefined || turnId === scope.turnId;
    const inStep = (stepIndex: number | undefined) => scope.stepIndex === undefined || stepIndex === scope.stepIndex;
    return {
      calls: [...this.calls.values()].filter((c) => inTurn(c.turnId) && inStep(c.stepIndex)),
      steps: [...this.steps.values()].filter((s) => inTurn(s.turnId) && inStep(s.stepIndex)).map((s) => ({ ...s })),
      turns: scope.stepIndex !== undefined ? [] : [...this.turns.values()].filter((t) => inTurn(t.turnId)).map((t) => ({ ...t })),
    };
  }

  isTurnOpen(turnId: string): boolean {
    return this.turns.has(turnId);
  }

  /** Whether this step has started and not ended. */
  isStepOpen(turnId: string, stepIndex: number): boolean {
    return this.steps.has(stepKey(turnId, stepIndex));
  }

  /** Open steps as [turnId, stepIndex]. */
  openSteps(): Array<[string, number]> {
    return [...this.steps.values()].map((s) => [s.turnId, s.stepIndex]);
  }

  /** Open turn ids. */
  openTurns(): string[] {
    return [...this.turns.keys()];
  }

  /** How an ended turn ended: its recorded outcome, else `completed`. */
  turnOutcome(turnId: string): string {
    return this.outcomes.get(turnId) ?? 'completed';
  }

  /** The calls answered `allowed-always`, in log order (what the approval stage remembers). */
  rememberedCalls(): readonly LogEventOf<'tool/call'>[] {
    return this.approvals.filter((e): e is LogEventOf<'tool/call'> => e.type === 'tool/call');
  }

  /**
   * The `session/checkpoint` event recording this index (to append to the log as it is now);
   * `suspension`: the events of a pending suspension (pendingSuspensionEvents), carried along.
   */
  toCheckpoint(suspension: readonly LogEvent[] = []): Extract<NewLogEvent, { type: 'session/checkpoint' }> {
    const state: CheckpointState = {
      seq: this.seq,
      turnStarts: this.turnStarts,
      prompt: this.prompt.toJSON(),
      calls: [...this.calls.values()],
      steps: [...this.steps.values()],
      turns: [...this.turns.values()],
      approvals: this.approvals as CheckpointState['approvals'],
      ...(this.sawSuspension ? { sawSuspension: true } : {}),
      ...(suspension.length ? { suspension: [...suspension] } : {}),
      ...(this.outcomes.size ? { outcomes: [...this.outcomes] } : {}),
    };
    return { type: 'session/checkpoint', version: CHECKPOINT_VERSION, state };
  }

  /**
   * The index a checkpoint recorded, or undefined when it does not check out (another version,
   * a state that is not what this code writes, or one that does not cover the events before it):
   * the caller then replays the history instead.
   */
  static fromCheckpoint(event: LogEventOf<'session/checkpoint'>): SessionIndex | undefined {
    if (event.version !== CHECKPOINT_VERSION) return undefined;
    const parsed = CheckpointStateSchema.safeParse(event.state);
    if (!parsed.success || parsed.data.seq !== event.seq - 1) return undefined;
    const s = parsed.data;
    if (!isPromptProjectionState(s.prompt)) return undefined;
    const index = new SessionIndex(PromptProjection.restore(s.prompt));
    index.seq = event.seq;
    index.turnStarts = s.turnStarts;
    for (const c of s.calls) {
      index.calls.set(c.seq, c);
      index.callsByPlace.set(placeKey(c), c);
    }
    for (const st of s.steps) index.steps.set(stepKey(st.turnId, st.stepIndex), { ...st });
    for (const t of s.turns) index.turns.set(t.turnId, { ...t });
    index.approvals.push(...(s.approvals as LogEvent[]));
    index.sawSuspension = s.sawSuspension === true;
    for (const [turnId, outcome] of s.outcomes ?? []) index.outcomes.set(turnId, outcome);
    if (s.suspension) index.suspension = s.suspension.filter((e) => e.seq < event.seq) as LogEvent[];
    return index;
  }
}

const nat = z.number().int().nonnegative();
const CheckpointStateSchema = z.object({
  seq: nat,
  turnStarts: nat,
  // Checked by isPromptProjectionState (zod over tens of thousands of results takes seconds).
  prompt: z.unknown(),
  calls: z.array(ToolCallEvent),
  steps: z.array(z.object({ turnId: z.string(), stepIndex: nat, toolCalls: nat })),
  turns: z.array(z.object({ turnId: z.string(), steps: nat })),
  approvals: z.array(z.union([ToolCallEvent, ApprovalAnswerEvent])),
  sawSuspension: z.boolean().optional(),
  suspension: z.array(LogEventSchema).optional(),
  outcomes: z.array(z.tuple([z.string(), z.string()])).optional(),
});
type CheckpointState = z.infer<typeof CheckpointStateSchema>;

