/**
 * One tool call, stage by stage (SPEC §2). Each stage is a named state, so an inspector shows a
 * call sitting in `awaitingApproval` or `executing`. The stage work is done by the injected
 * `CallStages`; a stage that answers synchronously is passed within the same macrostep (a
 * raised event), and a stage with no listeners is skipped by a guarded transition.
 *
 * Every exit, failure or not, goes through `finalizing`, which materialises a frozen result: the
 * actor never throws to its parent; its output is the `ToolResult`.
 */
import { assign, enqueueActions, setup, type AnyActorRef } from 'xstate';
import { describeThrown, ErrorCode, errorNameFor, type ApprovalAnswer, type ToolCallRequest, type ToolErrorInfo, type ToolResult } from '../src/protocol/index.js';
import type {
  CallStages,
  CallWhere,
  GuardOutcome,
  PostExecuteOutcome,
  PreExecuteOutcome,
  PrepareOutcome,
  PreparedCall,
  ResultDraft,
  Settlement,
  StageMarks,
} from './callStages.js';

export interface ToolCallInput {
  readonly request: ToolCallRequest;
  readonly where: CallWhere;
  readonly pipeline: CallStages;
  /** Validation already done by the scheduler (it needs the args to plan); else done here. */
  readonly prepared?: PrepareOutcome;
}

export interface ToolCallContext {
  readonly request: ToolCallRequest;
  readonly where: CallWhere;
  readonly pipeline: CallStages;
  readonly prepareOutcome: PrepareOutcome;
  readonly pre: PreExecuteOutcome | undefined;
  readonly guardOutcome: GuardOutcome;
  readonly settlement: Settlement | undefined;
  /** Aborts the body's signal on cancel (created with the call: cheaper than an assign on entry). */
  readonly abort: AbortController;
  readonly approvalAbort: AbortController | undefined;
  readonly marks: StageMarks | undefined;
  readonly result: ToolResult | undefined;
}

export type ToolCallMachineEvent =
  | { type: 'PRE.PENDING' }
  | { type: 'PRE.DECIDED'; outcome: PreExecuteOutcome }
  | { type: 'APPROVAL.ANSWERED'; answer: ApprovalAnswer | 'cancelled' }
  | { type: 'EXECUTED'; settlement: Settlement }
  | { type: 'POST.PENDING' }
  | { type: 'POST.DONE'; outcome: PostExecuteOutcome }
  /** The caller cancelled: not-yet-dispatched calls end ABORTED_BEFORE_DISPATCH, running ones are aborted. */
  | { type: 'CANCEL'; reason?: string };

const errorInfo = (code: ErrorCode, message: string): ToolErrorInfo => ({ name: errorNameFor(code), code, message });
const fail = (code: ErrorCode, message: string, content?: string): Settlement => ({ ok: false, error: errorInfo(code, message), content });

function prepared(context: ToolCallContext): PreparedCall {
  const outcome = context.prepareOutcome;
  if (!outcome.ok) throw new Error('toolCall: stage reached without a validated call');
  return outcome.prepared;
}

function sendIfActive(self: AnyActorRef, event: ToolCallMachineEvent): boolean {
  if (self.getSnapshot().status !== 'active') return false;
  self.send(event);
  return true;
}

function where(context: ToolCallContext) {
  return { turnId: context.where.turnId, stepIndex: context.where.stepIndex, callId: context.request.callId };
}

function hookFailedSettlement(f: { hook: string; listener: string; message: string }): Settlement {
  return fail(ErrorCode.HOOK_FAILED, `${f.hook} listener "${f.listener}" failed: ${f.message}`);
}

/** After an allow (or approval), go to the next stage that has work. */
const toGuardOrExecuting = [{ guard: 'hasGuards', target: 'guard' }, { target: 'executing' }] as const;

/** The body produced a value: on to post-execute if anyone listens there, else straight to finalizing. */
const bodySucceeded = [
  { guard: 'hasPostExecute', target: '#toolCall.postExecute', actions: 'takeSettlement' },
  // finalizing takes the settlement from the EXECUTED event itself (one context copy, not two)
  { target: '#toolCall.finalizing' },
] as const;

export const toolCallMachine = setup({
  types: {
    context: {} as ToolCallContext,
    input: {} as ToolCallInput,
    events: {} as ToolCallMachineEvent,
    output: {} as ToolResult,
  },
  actions: {
    mark: ({ context }, stage: keyof StageMarks) => {
      if (context.marks) context.marks[stage] = context.pipeline.now();
    },
    runPreExecute: enqueueActions(({ context, enqueue, self }) => {
      const outcome = context.pipeline.preExecute(prepared(context));
      if (outcome instanceof Promise) {
        enqueue.raise({ type: 'PRE.PENDING' });
        outcome.then(
          (o) => sendIfActive(self, { type: 'PRE.DECIDED', outcome: o }),
          (e: unknown) =>
            sendIfActive(self, {
              type: 'PRE.DECIDED',
              outcome: { kind: 'failed', hook: 'tools/pre-execute', listener: '?', message: describeThrown(e) },
            }),
        );
      } else {
        enqueue.raise({ type: 'PRE.DECIDED', outcome });
      }
    }),
    runPostExecute: enqueueActions(({ context, enqueue, self }) => {
      const s = context.settlement;
      if (!s?.ok) return;
      const outcome = context.pipeline.postExecute(prepared(context), s.draft);
      if (outcome instanceof Promise) {
        enqueue.raise({ type: 'POST.PENDING' });
        outcome.then(
          (o) => sendIfActive(self, { type: 'POST.DONE', outcome: o }),
          (e: unknown) =>
            sendIfActive(self, {
              type: 'POST.DONE',
              outcome: { kind: 'failed', hook: 'tools/post-execute', listener: '?', message: describeThrown(e) },
            }),
        );
      } else {
        enqueue.raise({ type: 'POST.DONE', outcome });
      }
    }),
    startApproval: ({ context, self }) => {
      const p = prepared(context);
      const reason = context.pre?.kind === 'ask' ? context.pre.reason : undefined;
      context.pipeline.record({ type: 'tool/approval-request', ...where(context), toolName: p.view.toolName, reason });
      context.pipeline.requestApproval(p, reason, context.approvalAbort!.signal).then(
        (answer) => sendIfActive(self, { type: 'APPROVAL.ANSWERED', answer }),
        () => sendIfActive(self, { type: 'APPROVAL.ANSWERED', answer: 'cancelled' }),
      );
    },
    stopApproval: ({ context }) => context.approvalAbort?.abort(),
    recordApproval: ({ context }, answer: 'timeout' | 'cancelled' | 'remembered' | ApprovalAnswer) => {
      context.pipeline.record({ type: 'tool/approval-answer', ...where(context), answer });
    },
    rememberApproval: ({ context }) => context.pipeline.rememberApproval(prepared(context)),
    startBody: ({ context, self }) => {
      const p = prepared(context);
      const pipeline = context.pipeline;
      pipeline.execute(p, context.abort.signal).then(
        (outcome) => {
          if (self.getSnapshot().status === 'active' && self.getSnapshot().matches('executing')) {
            let settlement: Settlement;
            try {
              settlement = outcome.ok ? pipeline.draftFromValue(p, outcome.value) : { ok: false as const, error: outcome.error };
            } catch (e) {
              // Whatever goes wrong here, the call still settles with a result (never hangs in executing).
              settlement = fail(ErrorCode.TOOL_FAILED, `the result of "${p.view.toolName}" could not be drafted: ${describeThrown(e)}`);
            }
            self.send({ type: 'EXECUTED', settlement });
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
    },
    takeSettlement: assign({ settlement: ({ context, event }) => (event.type === 'EXECUTED' ? event.settlement : context.settlement) }),
    abortBody: ({ context }, reason: string | undefined) => context.abort?.abort(reason ?? 'cancelled'),
    /** A user function needed to prepare the call (isConcurrencySafe) failed: that is a hook failure too. */
    recordPrepareFailure: ({ context }) => {
      const f = context.prepareOutcome.ok ? undefined : context.prepareOutcome.hookFailure;
      if (f) context.pipeline.record({ type: 'hook/failed', ...where(context), hook: f.hook, listener: f.listener, message: f.message, failed: 'closed' });
    },
    recordHookFailure: ({ context }, f: { hook: string; listener: string; message: string }) => {
      context.pipeline.record({
        type: 'hook/failed',
        ...where(context),
        hook: f.hook as 'tools/pre-execute',
        listener: f.listener,
        message: f.message,
        failed: 'closed',
      });
    },
  },
  guards: {
    prepareFailed: ({ context }) => !context.prepareOutcome.ok,
    hasPreExecute: ({ context }) => context.pipeline.hasPreExecute(),
    hasGuards: ({ context }) => context.pipeline.hasGuards(prepared(context)),
    hasPostExecute: ({ context, event }) =>
      event.type === 'EXECUTED' && event.settlement.ok && context.pipeline.hasPostExecute(prepared(context), event.settlement.draft),
    preFailed: ({ event }) => event.type === 'PRE.DECIDED' && event.outcome.kind === 'failed',
    preDenied: ({ event }) => event.type === 'PRE.DECIDED' && event.outcome.kind === 'deny',
    preAskRemembered: ({ context, event }) =>
      event.type === 'PRE.DECIDED' && event.outcome.kind === 'ask' && context.pipeline.isApprovalRemembered(prepared(context)),
    preAsk: ({ event }) => event.type === 'PRE.DECIDED' && event.outcome.kind === 'ask',
    approvedAlways: ({ event }) => event.type === 'APPROVAL.ANSWERED' && event.answer === 'allowed-always',
    approvedOnce: ({ event }) => event.type === 'APPROVAL.ANSWERED' && event.answer === 'allowed-once',
    guardFailed: ({ context }) => context.guardOutcome?.kind === 'failed',
    guardDenied: ({ context }) => context.guardOutcome?.kind === 'deny',
    bodyFailed: ({ event }) => event.type === 'EXECUTED' && !event.settlement.ok,
    postFailed: ({ event }) => event.type === 'POST.DONE' && event.outcome.kind === 'failed',
    postBlocked: ({ event }) => event.type === 'POST.DONE' && event.outcome.kind === 'blocked',
    postInvalidOutput: ({ event }) => event.type === 'POST.DONE' && event.outcome.kind === 'invalid-output',
  },
  delays: {
    approvalTimeout: ({ context }) => context.pipeline.limits.approvalTimeoutMs,
    abortGrace: ({ context }) => context.pipeline.limits.abortGraceMs,
    callTimeout: ({ context }) => context.pipeline.limits.callTimeoutMs,
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
      abort: new AbortController(),
      approvalAbort: undefined,
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
          actions: [
            'recordPrepareFailure',
            assign({ settlement: ({ context }) => ({ ok: false as const, error: (context.prepareOutcome as { error: ToolErrorInfo }).error }) }),
          ],
        },
        { guard: 'hasPreExecute', target: 'preExecute' },
        ...toGuardOrExecuting,
      ],
    },
    preExecute: {
      entry: { type: 'mark', params: 'preExecute' },
      initial: 'deciding',
      states: {
        deciding: { entry: 'runPreExecute', on: { 'PRE.PENDING': 'waitingForListener' } },
        // Each listener's own hook timeout is enforced by the stage, which always settles.
        waitingForListener: {},
      },
      on: {
        'PRE.DECIDED': [
          {
            guard: 'preFailed',
            target: 'finalizing',
            actions: [
              { type: 'recordHookFailure', params: ({ event }) => event.outcome as { hook: string; listener: string; message: string } },
              assign({ settlement: ({ event }) => hookFailedSettlement(event.outcome as { hook: string; listener: string; message: string }) }),
            ],
          },
          {
            guard: 'preDenied',
            target: 'finalizing',
            actions: assign({
              settlement: ({ event }) => {
                const reason = (event.outcome as { reason: string }).reason;
                return fail(ErrorCode.POLICY_DENIED, `denied by policy: ${reason}`);
              },
            }),
          },
          {
            guard: 'preAskRemembered',
            target: 'guard',
            actions: [assign({ pre: ({ event }) => event.outcome }), { type: 'recordApproval', params: 'remembered' }],
          },
          { guard: 'preAsk', target: 'awaitingApproval', actions: assign({ pre: ({ event }) => event.outcome }) },
          ...toGuardOrExecuting,
        ],
        CANCEL: {
          target: 'finalizing',
          actions: assign({ settlement: () => fail(ErrorCode.ABORTED_BEFORE_DISPATCH, 'cancelled before the tool body was dispatched') }),
        },
      },
    },
    awaitingApproval: {
      entry: [{ type: 'mark', params: 'awaitingApproval' }, assign({ approvalAbort: () => new AbortController() }), 'startApproval'],
      exit: 'stopApproval',
      after: {
        approvalTimeout: {
          target: 'finalizing',
          actions: [
            { type: 'recordApproval', params: 'timeout' },
            assign({
              settlement: ({ context }) =>
                fail(ErrorCode.APPROVAL_DENIED, `approval not answered within ${context.pipeline.limits.approvalTimeoutMs} ms`),
            }),
          ],
        },
      },
      on: {
        'APPROVAL.ANSWERED': [
          {
            guard: 'approvedAlways',
            target: 'guard',
            actions: [{ type: 'recordApproval', params: 'allowed-always' }, 'rememberApproval'],
          },
          { guard: 'approvedOnce', target: 'guard', actions: { type: 'recordApproval', params: 'allowed-once' } },
          {
            target: 'finalizing',
            actions: [
              { type: 'recordApproval', params: ({ event }) => event.answer },
              assign({ settlement: ({ event }) => fail(ErrorCode.APPROVAL_DENIED, `approval ${event.answer === 'cancelled' ? 'cancelled' : 'denied'}`) }),
            ],
          },
        ],
        CANCEL: {
          target: 'finalizing',
          actions: [
            { type: 'recordApproval', params: 'cancelled' },
            assign({ settlement: () => fail(ErrorCode.ABORTED_BEFORE_DISPATCH, 'cancelled while waiting for approval') }),
          ],
        },
      },
    },
    guard: {
      entry: [{ type: 'mark', params: 'guard' }, assign({ guardOutcome: ({ context }) => context.pipeline.guard(prepared(context)) })],
      always: [
        {
          guard: 'guardFailed',
          target: 'finalizing',
          actions: [
            { type: 'recordHookFailure', params: ({ context }) => context.guardOutcome as { hook: string; listener: string; message: string } },
            assign({ settlement: ({ context }) => hookFailedSettlement(context.guardOutcome as { hook: string; listener: string; message: string }) }),
          ],
        },
        {
          guard: 'guardDenied',
          target: 'finalizing',
          actions: assign({
            settlement: ({ context }) => {
              const g = context.guardOutcome as { reason: string; listener: string };
              return fail(ErrorCode.GUARD_DENIED, `denied by guard "${g.listener}": ${g.reason}`);
            },
          }),
        },
        { target: 'executing' },
      ],
    },
    executing: {
      entry: [{ type: 'mark', params: 'executing' }, 'startBody'],
      initial: 'running',
      states: {
        running: {
          after: {
            // The per-call deadline: whatever the wrappers and the body do, the call settles.
            callTimeout: {
              target: '#toolCall.finalizing',
              actions: [
                { type: 'abortBody', params: ({ context }) => `the call did not settle within ${context.pipeline.limits.callTimeoutMs} ms` },
                assign({
                  settlement: ({ context }) =>
                    fail(ErrorCode.TIMEOUT, `the call did not settle within ${context.pipeline.limits.callTimeoutMs} ms of dispatch (limits.callTimeoutMs)`),
                }),
              ],
            },
          },
          on: {
            CANCEL: 'aborting',
            EXECUTED: [
              { guard: 'bodyFailed', target: '#toolCall.finalizing' },
              ...bodySucceeded,
            ],
          },
        },
        aborting: {
          entry: { type: 'abortBody', params: ({ event }) => (event.type === 'CANCEL' ? event.reason : undefined) },
          after: {
            abortGrace: {
              target: '#toolCall.finalizing',
              actions: assign({ settlement: () => fail(ErrorCode.ABORTED, 'cancelled; the tool body did not settle within the grace period') }),
            },
          },
          on: {
            EXECUTED: [
              {
                // After a cancel, a failing body failed because of the abort: that is ABORTED.
                // (A body that still succeeded keeps its result: its work was done.)
                guard: 'bodyFailed',
                target: '#toolCall.finalizing',
                actions: assign({
                  settlement: ({ event }) => {
                    const s = event.settlement as Settlement & { ok: false };
                    return s.error.code === ErrorCode.ABORTED ? s : fail(ErrorCode.ABORTED, `cancelled: ${s.error.message}`);
                  },
                }),
              },
              ...bodySucceeded,
            ],
          },
        },
      },
    },
    postExecute: {
      entry: { type: 'mark', params: 'postExecute' },
      initial: 'deciding',
      states: {
        deciding: { entry: 'runPostExecute', on: { 'POST.PENDING': 'waitingForListener' } },
        // Each listener's own hook timeout is enforced by the stage, which always settles.
        waitingForListener: {},
      },
      on: {
        'POST.DONE': [
          {
            guard: 'postFailed',
            target: 'finalizing',
            actions: [
              { type: 'recordHookFailure', params: ({ event }) => event.outcome as { hook: string; listener: string; message: string } },
              assign({ settlement: ({ event }) => hookFailedSettlement(event.outcome as { hook: string; listener: string; message: string }) }),
            ],
          },
          {
            guard: 'postBlocked',
            target: 'finalizing',
            actions: assign({
              settlement: ({ event }) => {
                const o = event.outcome as { feedback: string; listener: string };
                return fail(ErrorCode.POST_EXECUTE_BLOCKED, `blocked by post-execute listener "${o.listener}": ${o.feedback}`, o.feedback);
              },
            }),
          },
          {
            guard: 'postInvalidOutput',
            target: 'finalizing',
            actions: assign({ settlement: ({ event }) => fail(ErrorCode.INVALID_OUTPUT, (event.outcome as { message: string }).message) }),
          },
          {
            target: 'finalizing',
            actions: assign({
              settlement: ({ event }) => ({ ok: true as const, draft: (event.outcome as { kind: 'accepted'; draft: ResultDraft }).draft }),
            }),
          },
        ],
      },
    },
    finalizing: {
      entry: [
        { type: 'mark', params: 'finalizing' },
        assign(({ context, event }) => {
          // A transition that settled the call set `settlement`; a body's outcome arrives as the
          // EXECUTED event that entered this state.
          const settlement =
            context.settlement ?? (event.type === 'EXECUTED' ? event.settlement : fail(ErrorCode.TOOL_FAILED, 'the call ended without a settlement'));
          const prepared = context.prepareOutcome.ok ? context.prepareOutcome.prepared : undefined;
          return { settlement, result: context.pipeline.finalize(context.request, prepared, settlement, context.marks) };
        }),
      ],
      always: 'settled',
    },
    settled: { type: 'final' },
  },
  output: ({ context }) => context.result!,
});

export type ToolCallMachine = typeof toolCallMachine;
