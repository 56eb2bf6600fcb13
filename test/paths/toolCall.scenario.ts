/**
 * Plays a planned toolCall path against the real runtime: a `createRuntime(...)` whose tool body,
 * pre-execute listener, guard, approval service and post-execute listener behave as the path's
 * configuration says, and whose pending promises, cancel and fake clock are moved exactly when the
 * path's events say. Two drivers: inside a turn (`rt.startTurn`, every microstep observed through
 * `inspect`) and alone (`rt.runCall`, observed from the handle's actor after it started).
 */
import { z } from 'zod';
import type { AnyEventObject, StateValue } from 'xstate';
import { toolCallMachine } from '../../machines/toolCall.js';
import { scriptedModel } from '../../src/adapters/model/index.js';
import type { ApprovalAnswer, LogEvent, PostExecuteDecision, PreExecuteDecision, ToolResult } from '../../src/protocol/index.js';
import { createRuntime, type CallHandle } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { catalogOf } from '../../src/testing/paths/catalog.js';
import { replay, type Microstep } from '../../src/testing/paths/modelScope.js';
import { Recorder, traceOf } from '../../src/testing/paths/observe.js';
import type { PlannedPath } from '../../src/testing/paths/planner.js';
import { sessionRules, type PathCheck, type PathRun } from './suite.js';
import { describeLogEvent, limits, resultCodeOf, toolCallInput, type ToolCallConfig } from './toolCall.model.js';
import { judgeToolCall, SPEC_RULES, type OracleRules } from './toolCall.oracle.js';
import { fireNextTimer, ManualClock, Pending, quiesce, settleTurn } from './world.js';

export type ToolCallDriver = 'turn' | 'runCall';

const catalog = catalogOf(toolCallMachine);
const trace = (m: readonly Microstep[]) => traceOf(m, (t) => catalog.transitionKeyOf(t));

const CALL_ID = 'call-0';
const WARM_UP = 'warm-up';

/** The runtime of one path: every promise the runtime will wait on is settled by the path. */
function world(config: ToolCallConfig) {
  const clock = new ManualClock();
  const pre = new Pending<PreExecuteDecision>();
  const approval = new Pending<ApprovalAnswer>();
  const body = new Pending<string>();
  const post = new Pending<PostExecuteDecision | void>();
  /** How often the runtime called each part for the call under test (the SPEC oracle judges these). */
  const asked = { body: 0, approval: 0, post: 0 };
  const probe = defineTool({
    name: 'probe',
    input: z.object({ n: z.number() }),
    output: z.string(),
    // Ignores its signal on purpose: when the body settles after a cancel is up to the path.
    execute: (_args, exec) => {
      if (exec.callId === WARM_UP) return 'warm';
      asked.body++;
      return body.next();
    },
  });
  const rt = createRuntime({
    tools: [probe],
    clock,
    limits,
    approval: {
      request: (req) => {
        if (req.callId === WARM_UP) return Promise.resolve('allowed-always' as const);
        asked.approval++;
        return approval.next();
      },
    },
    // The default spill listener is a post-execute listener too: off when the path has none.
    spillStore: config.post === 'none' ? false : undefined,
  });
  if (config.pre !== 'none') {
    rt.hooks.on('tools/pre-execute', 'gate', (call) => {
      if (call.callId === WARM_UP) return { kind: 'ask' };
      switch (config.pre) {
        case 'pending':
          return pre.next();
        case 'allow':
          return { kind: 'allow' };
        case 'deny':
          return { kind: 'deny', reason: 'not in plan mode' };
        case 'ask':
          return { kind: 'ask' };
        default:
          throw new Error('listener crashed');
      }
    });
  }
  if (config.guard !== 'none') {
    rt.tools.guard((call) => {
      if (call.callId === WARM_UP || config.guard === 'pass') return undefined;
      if (config.guard === 'deny') return 'never on Fridays';
      throw new Error('guard crashed');
    }, 'fridays');
  }
  if (config.post !== 'none') {
    rt.hooks.on('tools/post-execute', 'review', (_draft, call) => {
      if (call.callId === WARM_UP) return undefined;
      asked.post++;
      switch (config.post) {
        case 'pending':
          return post.next();
        case 'accepted':
          return { kind: 'accept' };
        case 'blocked':
          return { kind: 'block', feedback: 'contains a secret' };
        case 'invalid-output':
          return { kind: 'accept', value: 42 };
        default:
          throw new Error('listener crashed');
      }
    });
  }

  /** Makes the runtime produce `event` (the machine's view of what happened). */
  async function produce(event: AnyEventObject, cancel: (reason?: string) => void): Promise<void> {
    switch (event.type) {
      case 'PRE.DECIDED': {
        const d = pre.take('a pre-execute answer');
        const kind = event.outcome.kind as string;
        if (kind === 'failed') d.reject(new Error('listener crashed'));
        else d.resolve(kind === 'deny' ? { kind, reason: event.outcome.reason } : ({ kind } as PreExecuteDecision));
        break;
      }
      case 'APPROVAL.ANSWERED': {
        const d = approval.take('an approval answer');
        if (event.answer === 'cancelled') d.reject(new Error('approval service unreachable'));
        else d.resolve(event.answer);
        break;
      }
      case 'EXECUTED': {
        const d = body.take('the tool body to settle');
        if (event.settlement.ok) d.resolve('done');
        else d.reject(new Error('body failed'));
        break;
      }
      case 'POST.DONE': {
        const d = post.take('a post-execute answer');
        const kind = event.outcome.kind as string;
        if (kind === 'failed') d.reject(new Error('listener crashed'));
        else if (kind === 'blocked') d.resolve({ kind: 'block', feedback: event.outcome.feedback });
        else if (kind === 'invalid-output') d.resolve({ kind: 'accept', value: 42 });
        else d.resolve({ kind: 'accept' });
        break;
      }
      case 'CANCEL':
        cancel(event.reason);
        break;
      default:
        if (event.type.startsWith('xstate.after.')) {
          await fireNextTimer(clock, event.type);
          return;
        }
        // A new event in the machine needs a translation here before its paths can run.
        throw new Error(`no way to make the runtime produce ${event.type}`);
    }
    await quiesce();
  }

  return { clock, rt, produce, asked };
}

/** The call's own log events between its `tool/call` and `tool/result`, as the machine records them. */
function callEvents(events: readonly LogEvent[]): { inner: string[]; envelope: string[] } {
  const mine = events.filter((e) => 'callId' in e && e.callId === CALL_ID);
  return {
    envelope: mine.filter((e) => e.type === 'tool/call' || e.type === 'tool/result').map((e) => e.type),
    inner: mine.filter((e) => e.type !== 'tool/call' && e.type !== 'tool/result' && e.type !== 'warning').map((e) => describeLogEvent(e)),
  };
}

/**
 * Plays `path` with `driver`; returns what was observed next to what the machine model planned and
 * next to what SPEC requires (`toolCall.oracle.ts`, judged with `rules`).
 */
export async function runToolCallPath(path: PlannedPath<ToolCallConfig>, driver: ToolCallDriver, rules: OracleRules = SPEC_RULES): Promise<PathRun> {
  const recorded: string[] = [];
  const plan = replay(toolCallMachine, toolCallInput(path.config, recorded), path.events);
  const { clock, rt, produce, asked } = world(path.config);
  const recorder = new Recorder();
  const checks: PathCheck[] = [];

  if (path.config.remembered) {
    // `allowed-always` for the same tool and args, earlier in the session.
    const warm = rt.runCall({ callId: WARM_UP, toolName: 'probe', input: '{"n":1}' });
    await quiesce();
    await warm.result;
  }

  const toolName = path.config.prepare === 'unknown-tool' ? 'nope' : 'probe';
  const input = path.config.prepare === 'invalid-args' ? '{"n":"one"}' : '{"n":1}';
  const values: unknown[] = [];
  const valueOf = (s: { status: string; value: StateValue }) => (s.status === 'done' ? 'settled' : s.value);
  let result: () => Promise<ToolResult | undefined>;

  if (driver === 'turn') {
    const model = scriptedModel([{ toolCalls: [{ toolName, input, toolCallId: CALL_ID }] }, { text: 'done' }], { clock });
    const turn = rt.startTurn({ model, input: 'go', inspect: recorder.inspect });
    await quiesce();
    const actorOf = () => recorder.of(toolCallMachine)[0]?.ref;
    const current = () => {
      const s = actorOf()?.getSnapshot();
      return s ? valueOf(s) : 'not spawned';
    };
    values.push(current());
    for (const event of path.events) {
      await produce(event, (reason) => turn.cancel(reason));
      values.push(current());
    }
    const outcome = await settleTurn(clock, turn.done);
    checks.push({ what: 'turn outcome', planned: path.events.some((e) => e.type === 'CANCEL') ? 'cancelled' : 'completed', observed: outcome });
    const observed = recorder.of(toolCallMachine);
    checks.push({ what: 'toolCall actors in the turn', planned: 1, observed: observed.length });
    checks.push({
      what: 'microsteps (transitions taken, state after each)',
      planned: trace([...plan.initial, ...plan.steps.flatMap((s) => s.microsteps)]),
      observed: trace(observed[0]?.microsteps ?? []),
    });
    result = async () => {
      const e = rt.log.events().find((x) => x.type === 'tool/result' && x.callId === CALL_ID);
      return e?.type === 'tool/result' ? e.result : undefined;
    };
  } else {
    const handle: CallHandle = rt.runCall({ callId: CALL_ID, toolName, input });
    // Attached after start: the initial macrostep (validation, synchronous stages) is not seen here.
    const subscription = handle.actor.system.inspect(recorder.inspect);
    await quiesce();
    values.push(valueOf(handle.actor.getSnapshot()));
    for (const event of path.events) {
      await produce(event, (reason) => handle.cancel(reason));
      values.push(valueOf(handle.actor.getSnapshot()));
    }
    subscription.unsubscribe();
    checks.push({
      what: 'microsteps after start (transitions taken, state after each)',
      planned: trace(plan.steps.flatMap((s) => s.microsteps)),
      observed: trace(recorder.of(toolCallMachine)[0]?.microsteps ?? []),
    });
    result = async () => {
      await quiesce();
      // A call that never settles is a failed check, not a hung test.
      return handle.actor.getSnapshot().status === 'active' ? undefined : handle.result;
    };
  }

  const plannedValues = [plan.start, ...plan.steps.map((s) => s.snapshot)].map((s) =>
    s.status === 'done' ? 'settled' : s.value,
  );
  // Macrostep granularity: where the call rests after it started and after each event of the path.
  checks.push({ what: 'state after each step of the path', planned: plannedValues, observed: values });
  const r = await result();
  checks.push({ what: 'result code', planned: resultCodeOf(plan.final), observed: r ? (r.error?.code ?? 'ok') : '(no tool/result)' });
  const events = callEvents(rt.log.events());
  checks.push({ what: 'log: tool/call … tool/result pair', planned: ['tool/call', 'tool/result'], observed: events.envelope });
  checks.push({ what: "log: the call's events in between", planned: recorded.filter((r) => !r.startsWith('warning')), observed: events.inner });
  checks.push(...specChecks(path, rules, r, rt.log.events(), asked), sessionRules(rt.log.events()));
  return { recorder, checks };
}

/** The run judged by SPEC (`toolCall.oracle.ts`), from the path's setup and events only. */
function specChecks(
  path: PlannedPath<ToolCallConfig>,
  rules: OracleRules,
  r: ToolResult | undefined,
  log: readonly LogEvent[],
  asked: { readonly body: number; readonly approval: number; readonly post: number },
): PathCheck[] {
  const v = judgeToolCall(path.config, path.events, rules);
  const content = r?.content ?? '';
  return [
    { what: 'SPEC: the path is a possible history of one call', planned: [], observed: v.problems },
    { what: `SPEC: result code (${v.because})`, planned: v.code, observed: r ? (r.error?.code ?? 'ok') : '(no tool/result)' },
    { what: 'SPEC: isError exactly when the result has an error code', planned: v.code !== 'ok', observed: r?.isError },
    { what: 'SPEC: times the tool body was dispatched', planned: v.bodyRuns ? 1 : 0, observed: asked.body },
    { what: 'SPEC: times the approval service was asked', planned: v.approvalAsked ? 1 : 0, observed: asked.approval },
    { what: 'SPEC: times the post-execute listener saw the value', planned: v.postListenerRuns ? 1 : 0, observed: asked.post },
    {
      what: 'SPEC: failed listeners logged (hook/failed), by name',
      planned: v.failedListeners,
      observed: log.flatMap((e) => (e.type === 'hook/failed' && e.callId === CALL_ID ? [e.listener] : [])),
    },
    { what: `SPEC: the content contains ${JSON.stringify(v.contentIncludes)}`, planned: true, observed: v.contentIncludes === undefined || content.includes(v.contentIncludes) },
    { what: `SPEC: the content does not contain ${JSON.stringify(v.contentExcludes)}`, planned: true, observed: v.contentExcludes === undefined || !content.includes(v.contentExcludes) },
  ];
}
