/**
 * One tool call, stage by stage (SPEC §2). Each stage is a named state, so an inspector shows a
 * call sitting in `awaitingApproval` or `executing`. The stage work is done by the injected
 * `CallStages`; a stage that answers synchronously is passed within the same macrostep (a
 * raised event), and a stage with no listeners is skipped by a guarded transition.
 *
 * Every exit, failure or not, goes through `finalizing`, which materialises a frozen result: the
 * actor never throws to its parent; its output is the `ToolResult`.
 */
import { assertEvent, assign, enqueueActions, setup, type AnyActorRef } from 'xstate';
import { describeThrown, ErrorCode, errorNameFor, type ApprovalAnswer, type ApprovalPreview, type DecisionProvenance, type ToolCallRequest, type ToolErrorInfo, type ToolResult } from '../src/protocol/index.js';
import type {
  CallStages,
  CallWhere,
  GuardOutcome,
  ListenerFailure,
  PostExecuteOutcome,
  PostExecutePlan,
  PreExecuteOutcome,
  PrepareOutcome,
  PreparedCall,
  ResultDraft,
  Settlement,
  StageFailure,
  StageMarks,
  SyncOrAsync,
} from './callStages.js';

/** One call to run: the request, where it is (index, turn, step) and the pipeline that does its stages. */
export interface ToolCallInput {
  readonly request: ToolCallRequest;
  readonly where: CallWhere;
  readonly pipeline: CallStages;
  /** Validation already done by the scheduler (it needs the args to plan); else done here. */
  readonly prepared?: PrepareOutcome;
}

/** A call's context: its request, the pipeline, each stage's outcome, and its result once final. */
export interface ToolCallContext {
  readonly request: ToolCallRequest;
  readonly where: CallWhere;
  readonly pipeline: CallStages;
  readonly prepareOutcome: PrepareOutcome;
  readonly pre: PreExecuteOutcome | undefined;
  readonly guardOutcome: GuardOutcome;
  readonly settlement: Settlement | undefined;
  /** What the post-execute stage does with the body's draft (set on entering it). */
  readonly postPlan: PostExecutePlan | undefined;
  /**
   * Aborts the body's signal on cancel: a handle (created with the call, never replaced), like the
   * injected pipeline. The snapshot's values never change; a handle's own state (aborted) may.
   */
  readonly abort: AbortController;
  /** Disarms the per-call deadline armed at dispatch (set with the body's start). */
  readonly disarmDeadline: (() => void) | undefined;
  /** Withdraws the pending approval question (a handle, created on entering `awaitingApproval`). */
  readonly approvalAbort: AbortController | undefined;
  /** Who allowed an asked call (`the person`, or a remembered `allowed-always`): the result names them as its final decider. */
  readonly approvedBy: string | undefined;
  /** When each stage was entered, for a metered call: a new object per stage. */
  readonly marks: StageMarks | undefined;
  readonly result: ToolResult | undefined;
}

/** What a call actor hears: its stages' outcomes, an approval's answer, the body settling, a cancel. */
export type ToolCallMachineEvent =
  | { type: 'PRE.PENDING' }
  | { type: 'PRE.DECIDED'; outcome: PreExecuteOutcome }
  | { type: 'APPROVAL.ANSWERED'; answer: ApprovalAnswer | 'cancelled'; reason?: string }
  /** The body's outcome, and (for a value) what the post-execute stage does with its draft. */
  | { type: 'EXECUTED'; settlement: Settlement; post?: PostExecutePlan }
  | { type: 'POST.PENDING' }
  | { type: 'POST.DONE'; outcome: PostExecuteOutcome }
  /** The caller cancelled: not-yet-dispatched calls end ABORTED_BEFORE_DISPATCH, running ones are aborted. */
  | { type: 'CANCEL'; reason?: string };

const errorInfo = (code: ErrorCode, message: string): ToolErrorInfo => ({ name: errorNameFor(code), code, message });
const fail = (code: ErrorCode, message: string, content?: string): Settlement => ({ ok: false, error: errorInfo(code, message), content });

function prepared(context: ToolCallContext): PreparedCall {
  const outcome = context.prepareOutcome;
  // Stryker disable next-line ConditionalExpression,StringLiteral: every stage after validating is reached only by a call that validated (prepareFailed goes to finalizing): the throw only narrows the type
  if (!outcome.ok) throw new Error('toolCall: stage reached without a validated call');
  return outcome.prepared;
}

/** Sends to the call unless it has ended (an answer or outcome that comes after a cancel or a stop). */
function sendIfActive(self: AnyActorRef, event: ToolCallMachineEvent): void {
  // Stryker disable next-line ConditionalExpression: XState drops an event sent to an actor that has ended (it only warns): the check keeps that warning out of the user's console
  if (self.getSnapshot().status === 'active') self.send(event);
}

/**
 * The marks with this stage's entry time, for a metered call (a new object; undefined when the
 * call is not metered). Taken by each stage's own first assign rather than by a `mark` action of
 * its own: one action less per stage (each action is an inspection event when someone inspects).
 */
function marked(context: ToolCallContext, stage: keyof StageMarks): StageMarks | undefined {
  return context.marks ? { ...context.marks, [stage]: context.pipeline.now() } : undefined;
}

/**
 * What a call stopped from outside (its scheduler stopped: a suspended turn, a crashed step) lets
 * go of: XState runs no exit actions on a stop, so the body's signal, the approval question and
 * the deadline timer (which would keep a process alive) are released by whoever stopped it (the
 * scheduler does, for its children).
 */
export function releaseStoppedCall(context: ToolCallContext, reason: string): void {
  context.approvalAbort?.abort(reason);
  context.abort.abort(reason);
  context.disarmDeadline?.();
}

function where(context: ToolCallContext) {
  return { turnId: context.where.turnId, stepIndex: context.where.stepIndex, callId: context.request.callId };
}

/** How a stage ends the call: its settlement, and the listener failure to log first when one failed closed. */
export interface Verdict {
  readonly settlement: Settlement;
  readonly failure?: ListenerFailure;
}

/** Who decided at the approval stage, as a result's `decision` names them. */
const APPROVED_BY = { person: 'the person', remembered: 'an earlier allowed-always', cancel: 'a cancel of the turn', deadline: 'the approval deadline' } as const;

/** The result's `decision` of a policy stage's outcome. */
const decidedBy = (stage: DecisionProvenance['stage'], outcome: DecisionProvenance['outcome'], by: string, rule?: string): { decision: DecisionProvenance } => ({
  // Stryker disable next-line ConditionalExpression: a `rule: undefined` key is no rule (the log's JSON drops it, the schema reads it as absent); leaving it out keeps results tidy
  decision: rule === undefined ? { stage, outcome, by } : { stage, outcome, by, rule },
});
const STAGE_OF_HOOK = { 'tools/pre-execute': 'pre-execute', 'tools/guard': 'guard', 'tools/post-execute': 'post-execute' } as const;

const failedClosed = (f: StageFailure): Verdict => ({
  settlement: { ...fail(ErrorCode.HOOK_FAILED, `${f.hook} listener "${f.listener}" failed: ${f.message}`), ...decidedBy(STAGE_OF_HOOK[f.hook], 'failed', f.listener) },
  failure: f,
});

/** A call that did not resolve or validate ends here. */
function prepareVerdict(o: Extract<PrepareOutcome, { ok: false }>): Verdict {
  return { settlement: { ok: false, error: o.error }, failure: o.hookFailure };
}

/** The verdict of a refused pre-execute outcome: `failed` or `deny` (the only ones `preRefused` lets through). */
function preVerdict(o: Extract<PreExecuteOutcome, { kind: 'failed' | 'deny' }>): Verdict {
  if (o.kind === 'failed') return failedClosed(o);
  return {
    settlement: { ...fail(ErrorCode.POLICY_DENIED, `denied by policy: ${o.reason}`), ...(o.by === undefined ? {} : decidedBy('pre-execute', 'deny', o.by, o.rule)) },
  };
}

/** A guard that failed or denied ends the call. */
function guardVerdict(o: NonNullable<GuardOutcome>): Verdict {
  if (o.kind === 'failed') return failedClosed(o);
  return { settlement: { ...fail(ErrorCode.GUARD_DENIED, `denied by guard "${o.listener}": ${o.reason}`), ...decidedBy('guard', 'deny', o.listener, o.rule) } };
}

/** Every post-execute outcome ends the call, accepted or not. */
function postVerdict(o: PostExecuteOutcome): Verdict {
  switch (o.kind) {
    case 'failed':
      return failedClosed(o);
    case 'blocked':
      return {
        settlement: { ...fail(ErrorCode.POST_EXECUTE_BLOCKED, `blocked by post-execute listener "${o.listener}": ${o.feedback}`, o.feedback), ...decidedBy('post-execute', 'block', o.listener) },
      };
    case 'invalid-output':
      return { settlement: fail(ErrorCode.INVALID_OUTPUT, o.message) };
    case 'accepted':
      return { settlement: { ok: true, draft: o.draft } };
  }
}

/**
 * A body that settles after a cancel settles ABORTED (SPEC §3: started calls end ABORTED unless they
 * had produced a result before it, §8.9): a failure failed because of the abort (its partial
 * content and metadata are kept), and a value that came after the cancel is discarded.
 */
function abortedSettlement(s: Settlement): Settlement {
  const byCancel = decidedBy('execute', 'cancelled', APPROVED_BY.cancel);
  if (s.ok) return { ...fail(ErrorCode.ABORTED, 'cancelled; the tool body returned after the cancel and its result was discarded'), ...byCancel };
  if (s.error.code === ErrorCode.ABORTED) return { ...s, ...byCancel };
  return { ok: false, error: errorInfo(ErrorCode.ABORTED, `cancelled: ${s.error.message}`), metadata: s.metadata, ...byCancel };
}

/** What the machine needs to know of a listener stage (pre- or post-execute). */
interface ListenerStage<O> {
  /** Raised when the stage has to wait: the call moves to the stage's waiting state (`preExecuteWaiting`, `postExecuteWaiting`). */
  readonly pending: ToolCallMachineEvent;
  /** The event carrying the stage's outcome. */
  readonly decided: (outcome: O) => ToolCallMachineEvent;
  /** The outcome if the stage's promise rejects (by contract it never does: a last line of defence). */
  readonly crashed: (e: unknown) => O;
}

const preStage: ListenerStage<PreExecuteOutcome> = {
  pending: { type: 'PRE.PENDING' },
  decided: (outcome) => ({ type: 'PRE.DECIDED', outcome }),
  crashed: (e) => ({ kind: 'failed', hook: 'tools/pre-execute', listener: '?', message: describeThrown(e) }),
};

const postStage: ListenerStage<PostExecuteOutcome> = {
  pending: { type: 'POST.PENDING' },
  decided: (outcome) => ({ type: 'POST.DONE', outcome }),
  crashed: (e) => ({ kind: 'failed', hook: 'tools/post-execute', listener: '?', message: describeThrown(e) }),
};

/**
 * Runs a listener stage: an outcome known now is raised, so the stage passes within this
 * macrostep; a pending one moves the call to the stage's waiting state until its outcome is sent. The
 * stage enforces each listener's hook timeout itself, so a pending outcome always settles.
 */
function runListenerStage<O>(stage: ListenerStage<O>, outcome: SyncOrAsync<O>, raise: (event: ToolCallMachineEvent) => void, self: AnyActorRef): void {
  if (!(outcome instanceof Promise)) return raise(stage.decided(outcome));
  raise(stage.pending);
  outcome.then(
    (o: O) => sendIfActive(self, stage.decided(o)),
    (e: unknown) => sendIfActive(self, stage.decided(stage.crashed(e))),
  );
}

/** After an allow, go to the next stage that has work. */
const toGuardOrExecuting = [
  { guard: 'hasGuards', target: 'guard' },
  { guard: 'noGuards', target: 'executing' },
] as const;

/** A pre-execute outcome, in `preExecute` or `preExecuteWaiting`: refused, a remembered ask, an ask, or allowed. */
const preDecided = [
  {
    guard: 'preRefused',
    target: 'finalizing',
    actions: {
      type: 'conclude',
      params: ({ event }: { event: ToolCallMachineEvent }) => {
        assertEvent(event, 'PRE.DECIDED');
        return preVerdict(event.outcome as Extract<PreExecuteOutcome, { kind: 'failed' | 'deny' }>); // preRefused: failed or deny
      },
    },
  },
  { guard: 'preAskRemembered', target: 'guard', actions: ['keepPreOutcome', { type: 'recordApproval', params: 'remembered' }, 'approvedByMemory'] },
  { guard: 'preAsk', target: 'awaitingApproval', actions: 'keepPreOutcome' },
  { guard: 'hasGuards', target: 'guard', actions: 'keepPreOutcome' },
  { guard: 'noGuards', target: 'executing', actions: 'keepPreOutcome' },
] as const;

/** Every post-execute outcome ends the call: its verdict says how. */
const postDone = {
  target: 'finalizing',
  actions: {
    type: 'conclude',
    params: ({ event }: { event: ToolCallMachineEvent }) => {
      assertEvent(event, 'POST.DONE');
      return postVerdict(event.outcome);
    },
  },
} as const;

/** One tool call through the pipeline, each stage a named state: `validating`, `preExecute`, `awaitingApproval`, `guard`, `executing`, `postExecute`, `finalizing`. */
export const toolCallMachine = setup({
  types: {
    context: {} as ToolCallContext,
    input: {} as ToolCallInput,
    events: {} as ToolCallMachineEvent,
    output: {} as ToolResult,
  },
  actions: {
    runPreExecute: enqueueActions(({ context, enqueue, self }) => {
      // Stryker disable next-line ConditionalExpression: an unmetered call's marks stay undefined either way (the check saves a context copy)
      if (context.marks) enqueue.assign({ marks: marked(context, 'preExecute') });
      runListenerStage(preStage, context.pipeline.preExecute(prepared(context)), (e) => enqueue.raise(e), self);
    }),
    runPostExecute: enqueueActions(({ context, enqueue, self }) => {
      // Stryker disable next-line ConditionalExpression: an unmetered call's marks stay undefined either way (the check saves a context copy)
      if (context.marks) enqueue.assign({ marks: marked(context, 'postExecute') });
      const s = context.settlement;
      // Stryker disable next-line ConditionalExpression,OptionalChaining: postExecute is entered only with a body's value (hasPostExecute): the check narrows the type
      // (postPlan is set: hasPostExecute let the body's value in only with a plan, and takeSettlement kept it.)
      if (s?.ok) runListenerStage(postStage, context.pipeline.postExecute(prepared(context), s.draft, context.postPlan!), (e) => enqueue.raise(e), self);
    }),
    /** Ends the call as a stage's verdict says: a listener that failed closed is logged first. */
    conclude: enqueueActions(({ context, enqueue }, verdict: Verdict) => {
      const f = verdict.failure;
      if (f) {
        enqueue(() => context.pipeline.record({ type: 'hook/failed', ...where(context), hook: f.hook, listener: f.listener, message: f.message, failed: 'closed' }));
      }
      enqueue.assign({ settlement: verdict.settlement });
    }),
    startApproval: ({ context, self }) => {
      const p = prepared(context);
      // awaitingApproval is entered only from an `ask` (preAsk): the check narrows the type.
      // Stryker disable next-line ConditionalExpression,OptionalChaining: see above
      const ask = context.pre?.kind === 'ask' ? context.pre : undefined;
      // Stryker disable next-line OptionalChaining: see above
      const reason = ask?.reason;
      // Stryker disable next-line OptionalChaining: see above
      const preview = (ask as { preview?: ApprovalPreview } | undefined)?.preview;
      context.pipeline.record({ type: 'tool/approval-request', ...where(context), toolName: p.view.toolName, reason, ...(preview ? { preview } : {}) });
      context.pipeline.requestApproval(p, reason, context.approvalAbort!.signal, preview).then(
        (a) => sendIfActive(self, typeof a === 'string' ? { type: 'APPROVAL.ANSWERED', answer: a } : { type: 'APPROVAL.ANSWERED', answer: a.answer, reason: a.reason }),
        () => sendIfActive(self, { type: 'APPROVAL.ANSWERED', answer: 'cancelled' }),
      );
    },
    // Stryker disable next-line OptionalChaining: awaitingApproval's entry made the controller this exit aborts
    stopApproval: ({ context }) => context.approvalAbort?.abort(),
    recordApproval: ({ context }, answer: 'timeout' | 'cancelled' | 'remembered' | ApprovalAnswer) => {
      context.pipeline.record({ type: 'tool/approval-answer', ...where(context), answer });
    },
    /** A refusal is logged with the person's reason, when they gave one. */
    recordRefusal: ({ context, event }) => {
      assertEvent(event, 'APPROVAL.ANSWERED');
      context.pipeline.record({ type: 'tool/approval-answer', ...where(context), answer: event.answer, ...(event.reason ? { reason: event.reason } : {}) });
    },
    rememberApproval: ({ context }) => context.pipeline.rememberApproval(prepared(context)),
    startBody: enqueueActions(({ context, enqueue, self }) => {
      const p = prepared(context);
      const pipeline = context.pipeline;
      // The per-call deadline: whatever the wrappers and the body do, the call settles TIMEOUT.
      const disarmDeadline = pipeline.armDeadline?.(p, (error) => {
        context.abort.abort(error.message);
        sendIfActive(self, { type: 'EXECUTED', settlement: { ok: false, error } });
      });
      // (An assigner function: in a property object, a function value would be called as its assigner.)
      // Stryker disable next-line ConditionalExpression: with neither, the assign would set both to undefined, as they are (the check saves a context copy)
      if (disarmDeadline || context.marks) enqueue.assign(() => ({ disarmDeadline, marks: marked(context, 'executing') }));
      pipeline.execute(p, context.abort.signal).then(
        (outcome) => {
          // A call still active is in executing or aborting: the body settles once, and whatever
          // else ends the call (the deadline, the abort grace) ends it.
          if (self.getSnapshot().status === 'active') {
            let settlement: Settlement;
            let post: PostExecutePlan | undefined;
            try {
              settlement = outcome.ok
                ? pipeline.draftFromValue(p, outcome.value)
                : { ok: false as const, error: outcome.error, content: outcome.content, metadata: outcome.metadata };
              // Decided here, once: the guard that routes on it runs no user code.
              if (settlement.ok && self.getSnapshot().matches('executing')) post = pipeline.planPostExecute(p, settlement.draft);
            } catch (e) {
              // Whatever goes wrong here, the call still settles with a result (never hangs in executing).
              settlement = fail(ErrorCode.TOOL_FAILED, `the result of "${p.view.toolName}" could not be drafted: ${describeThrown(e)}`);
            }
            self.send(post ? { type: 'EXECUTED', settlement, post } : { type: 'EXECUTED', settlement });
          } else {
            pipeline.record({
              type: 'warning',
              ...where(context),
              code: 'LATE_OUTCOME_DISCARDED',
              message: `the body of "${p.view.toolName}" settled after its call was already settled; its outcome was discarded`,
              data: { ok: outcome.ok },
            });
          }
        },
        // pipeline.execute never rejects by contract; this is a last line of defence.
        (e: unknown) => sendIfActive(self, { type: 'EXECUTED', settlement: fail(ErrorCode.TOOL_FAILED, describeThrown(e)) }),
      );
    }),
    /** An `ask` (remembered or not) is kept: the approval request gives its reason. */
    keepPreOutcome: assign({
      pre: ({ event }) => {
        assertEvent(event, 'PRE.DECIDED');
        return event.outcome;
      },
    }),
    approvedByPerson: assign({ approvedBy: () => APPROVED_BY.person }),
    approvedByMemory: assign({ approvedBy: () => APPROVED_BY.remembered }),
    cancelBeforeDispatch: assign({
      settlement: () => ({ ...fail(ErrorCode.ABORTED_BEFORE_DISPATCH, 'cancelled before the tool body was dispatched'), ...decidedBy('pre-execute', 'cancelled', APPROVED_BY.cancel) }),
    }),
    takeSettlement: assign(({ event }) => {
      assertEvent(event, 'EXECUTED');
      return { settlement: event.settlement, postPlan: event.post };
    }),
    abortBody: ({ context }, reason: string | undefined) => context.abort.abort(reason ?? 'cancelled'),
    disarmDeadline: ({ context }) => context.disarmDeadline?.(),
  },
  guards: {
    prepareFailed: ({ context }) => !context.prepareOutcome.ok,
    hasPreExecute: ({ context }) => context.pipeline.hasPreExecute(),
    hasGuards: ({ context }) => context.pipeline.hasGuards(prepared(context)),
    noGuards: ({ context }) => !context.pipeline.hasGuards(prepared(context)),
    /**
     * The body produced a value and the post-execute stage runs for it (the plan the body's
     * outcome came with: some listener applies, or one's `appliesTo` threw): otherwise the call is
     * settled as it is (the next, unguarded transition).
     */
    hasPostExecute: ({ event }) => {
      assertEvent(event, 'EXECUTED');
      return event.settlement.ok && event.post !== undefined && event.post.kind !== 'skip';
    },
    /** The fallback after `hasPostExecute` (named for the diagram). */
    noPostExecute: () => true,
    /** A pre-execute listener failed closed, or denied. */
    preRefused: ({ event }) => {
      assertEvent(event, 'PRE.DECIDED');
      return event.outcome.kind === 'failed' || event.outcome.kind === 'deny';
    },
    preAskRemembered: ({ context, event }) => {
      assertEvent(event, 'PRE.DECIDED');
      return event.outcome.kind === 'ask' && context.pipeline.isApprovalRemembered(prepared(context));
    },
    preAsk: ({ event }) => {
      assertEvent(event, 'PRE.DECIDED');
      return event.outcome.kind === 'ask';
    },
    approvedAlways: ({ event }) => {
      assertEvent(event, 'APPROVAL.ANSWERED');
      return event.answer === 'allowed-always';
    },
    approvedOnce: ({ event }) => {
      assertEvent(event, 'APPROVAL.ANSWERED');
      return event.answer === 'allowed-once';
    },
    /** The fallback after the two approvals (named for the diagram): denied, or withdrawn (the service failed, the call was cancelled elsewhere). */
    approvalRefused: () => true,
    /** A guard failed closed, or denied. */
    guardRefused: ({ context }) => context.guardOutcome !== undefined,
    /** The fallback after `guardRefused` (named for the diagram). */
    guardsPassed: () => true,
  },
  delays: {
    approvalTimeout: ({ context }) => context.pipeline.limits.approvalTimeoutMs,
    abortGrace: ({ context }) => context.pipeline.limits.abortGraceMs,
  },
}).createMachine({
  id: 'toolCall',
  context: ({ input }) => {
    // Validation runs as the call actor is created, in its initial state `validating` (which then
    // routes on the outcome): computed here, it costs no assign (a context copy) per call.
    const prepareOutcome = input.prepared ?? input.pipeline.prepare(input.request, input.where);
    const marks = prepareOutcome.ok && input.pipeline.isMetered(prepareOutcome.prepared) ? { validating: input.pipeline.now() } : undefined;
    return {
      request: input.request,
      where: input.where,
      pipeline: input.pipeline,
      prepareOutcome,
      pre: undefined,
      guardOutcome: undefined,
      settlement: undefined,
      postPlan: undefined,
      abort: new AbortController(),
      disarmDeadline: undefined,
      approvalAbort: undefined,
      approvedBy: undefined,
      marks,
      result: undefined,
    };
  },
  initial: 'validating',
  states: {
    validating: {
      always: [
        {
          guard: 'prepareFailed',
          target: 'finalizing',
          actions: { type: 'conclude', params: ({ context }) => prepareVerdict(context.prepareOutcome as Extract<PrepareOutcome, { ok: false }>) },
        },
        { guard: 'hasPreExecute', target: 'preExecute' },
        ...toGuardOrExecuting,
      ],
    },
    // Left in the macrostep it is entered in (its outcome, or PRE.PENDING, is raised): a CANCEL
    // cannot find a call here.
    preExecute: {
      entry: 'runPreExecute',
      on: {
        'PRE.PENDING': 'preExecuteWaiting',
        'PRE.DECIDED': preDecided,
      },
    },
    /** A pre-execute listener answers later. Each listener's own hook timeout is enforced by the stage, which always settles. */
    preExecuteWaiting: {
      on: {
        'PRE.DECIDED': preDecided,
        CANCEL: { target: 'finalizing', actions: 'cancelBeforeDispatch' },
      },
    },
    awaitingApproval: {
      entry: [
        assign(({ context }) => ({ approvalAbort: new AbortController(), marks: marked(context, 'awaitingApproval') })),
        'startApproval',
      ],
      exit: 'stopApproval',
      after: {
        approvalTimeout: {
          target: 'finalizing',
          actions: [
            { type: 'recordApproval', params: 'timeout' },
            assign({
              settlement: ({ context }) => ({
                ...fail(ErrorCode.APPROVAL_DENIED, `approval not answered within ${context.pipeline.limits.approvalTimeoutMs} ms`),
                ...decidedBy('approval', 'timeout', APPROVED_BY.deadline, `approvalTimeoutMs ${context.pipeline.limits.approvalTimeoutMs}`),
              }),
            }),
          ],
        },
      },
      on: {
        'APPROVAL.ANSWERED': [
          {
            guard: 'approvedAlways',
            target: 'guard',
            actions: [{ type: 'recordApproval', params: 'allowed-always' }, 'rememberApproval', 'approvedByPerson'],
          },
          { guard: 'approvedOnce', target: 'guard', actions: [{ type: 'recordApproval', params: 'allowed-once' }, 'approvedByPerson'] },
          {
            guard: 'approvalRefused',
            target: 'finalizing',
            actions: [
              'recordRefusal',
              assign({
                settlement: ({ event }) => ({
                  // Stryker disable next-line ConditionalExpression: only APPROVAL.ANSWERED carries a reason (the check narrows the type; another event's reason is absent either way)
                  ...fail(ErrorCode.APPROVAL_DENIED, `approval ${event.answer === 'cancelled' ? 'cancelled' : 'denied'}${event.type === 'APPROVAL.ANSWERED' && event.reason ? `: ${event.reason}` : ''}`),
                  ...(event.answer === 'cancelled' ? decidedBy('approval', 'cancelled', APPROVED_BY.cancel) : decidedBy('approval', 'deny', APPROVED_BY.person)),
                }),
              }),
            ],
          },
        ],
        CANCEL: {
          target: 'finalizing',
          actions: [
            { type: 'recordApproval', params: 'cancelled' },
            assign({ settlement: () => ({ ...fail(ErrorCode.ABORTED_BEFORE_DISPATCH, 'cancelled while waiting for approval'), ...decidedBy('approval', 'cancelled', APPROVED_BY.cancel) }) }),
          ],
        },
      },
    },
    guard: {
      entry: assign(({ context }) => ({ marks: marked(context, 'guard'), guardOutcome: context.pipeline.guard(prepared(context)) })),
      always: [
        { guard: 'guardRefused', target: 'finalizing', actions: { type: 'conclude', params: ({ context }) => guardVerdict(context.guardOutcome!) } },
        { guard: 'guardsPassed', target: 'executing' },
      ],
    },
    executing: {
      entry: 'startBody',
      on: {
        // The per-call deadline stays armed while the body is being aborted.
        CANCEL: 'aborting',
        EXECUTED: [
          { guard: 'hasPostExecute', target: 'postExecute', actions: ['disarmDeadline', 'takeSettlement'] },
          // The body failed, or nobody listens after it. finalizing takes the settlement from the
          // EXECUTED event itself (one context copy, not two).
          { guard: 'noPostExecute', target: 'finalizing', actions: 'disarmDeadline' },
        ],
      },
    },
    /** Cancelled while the body ran: its signal is aborted, and it gets `abortGraceMs` to settle. */
    aborting: {
      entry: {
        type: 'abortBody',
        params: ({ event }) => {
          assertEvent(event, 'CANCEL');
          return event.reason;
        },
      },
      exit: 'disarmDeadline',
      after: {
        abortGrace: {
          target: 'finalizing',
          actions: assign({ settlement: () => ({ ...fail(ErrorCode.ABORTED, 'cancelled; the tool body did not settle within the grace period'), ...decidedBy('execute', 'cancelled', APPROVED_BY.cancel) }) }),
        },
      },
      on: {
        // Whatever the body did after the cancel, the call ends ABORTED.
        EXECUTED: { target: 'finalizing', actions: assign({ settlement: ({ event }) => abortedSettlement(event.settlement) }) },
      },
    },
    postExecute: {
      entry: 'runPostExecute',
      on: {
        'POST.PENDING': 'postExecuteWaiting',
        'POST.DONE': postDone,
      },
    },
    /** A post-execute listener answers later. Each listener's own hook timeout is enforced by the stage, which always settles. */
    postExecuteWaiting: {
      on: {
        'POST.DONE': postDone,
      },
    },
    finalizing: {
      entry: [
        assign(({ context, event }) => {
          const marks = marked(context, 'finalizing');
          // A transition that settled the call set `settlement`; a body's outcome arrives as the
          // EXECUTED event that entered this state.
          const settled = context.settlement ?? (assertEvent(event, 'EXECUTED'), event.settlement);
          // The result names its final decider: the stage that settled it (a deny, a block, the
          // person's no, a cancel, a deadline), else whoever allowed it: the person who answered an
          // ask, else the listener that allowed (or asked about) it.
          // Stryker disable next-line ConditionalExpression: `pre` is only ever an allow or an ask (keepPreOutcome runs after preRefused let it through); the check narrows the type
          const pre = context.pre?.kind === 'ask' || context.pre?.kind === 'allow' ? context.pre : undefined;
          const settlement = settled.decision
            ? settled
            : context.approvedBy !== undefined
              ? { ...settled, ...decidedBy('approval', 'allow', context.approvedBy) }
              : pre?.by !== undefined
                ? { ...settled, ...decidedBy('pre-execute', pre.kind, pre.by, pre.rule) }
                : settled;
          const prepared = context.prepareOutcome.ok ? context.prepareOutcome.prepared : undefined;
          return { settlement, marks, result: context.pipeline.finalize(context.request, prepared, settlement, marks) };
        }),
      ],
      always: 'settled',
    },
    settled: { type: 'final' },
  },
  output: ({ context }) => context.result!,
});

/** The type of `toolCallMachine`. */
export type ToolCallMachine = typeof toolCallMachine;
