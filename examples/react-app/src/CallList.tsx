/**
 * The live call list of one turn. Rows come from the session log (`tool/call` is appended before
 * a call can run, so rows are in call order); each row's stage comes from its call actor, read
 * with `useSelector`: turn actor → its `step` child → the step's `scheduler` child → the
 * `toolCall` actor of each running call (`call-<index>`, its context holds the request). Once the
 * call's `tool/result` is committed (in call order), the row shows the result instead.
 */
import { useRef, useSyncExternalStore } from 'react';
import { useSelector } from '@xstate/react';
import type { AnyActorRef } from 'xstate';
import { stateValuePath, type LogEvent, type ToolResult, type TurnHandle } from 'dsh';
import type { ApprovalAnswer, ApprovalStore, PendingApproval } from './approvals';

type CallEvent = Extract<LogEvent, { type: 'tool/call' }>;
type ResultEvent = Extract<LogEvent, { type: 'tool/result' }>;

const NO_ACTORS: readonly AnyActorRef[] = [];
const sameActors = (a: readonly AnyActorRef[], b: readonly AnyActorRef[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** What a scheduler snapshot holds of its calls: each running call's actor, in call order. */
type SchedulerView = { context?: { gate?: { entries?: ReadonlyArray<{ actor?: AnyActorRef }> } } };

/**
 * The running step's call actors, from the turn actor down. Call actors are not XState children of
 * the scheduler (it creates them itself, for speed): each running call's actor is on its entry in
 * the scheduler's commit gate, and the scheduler's snapshot changes whenever one starts or ends.
 */
function useCallActors(turn: TurnHandle): readonly AnyActorRef[] {
  const step = useSelector(turn.actor, (s) => s.children.step as AnyActorRef | undefined);
  const scheduler = useSelector(step, (s) => s?.children?.scheduler as AnyActorRef | undefined);
  return useSelector(
    scheduler,
    (s) => (s as SchedulerView | undefined)?.context?.gate?.entries?.flatMap((e) => (e.actor ? [e.actor] : [])) ?? NO_ACTORS,
    sameActors,
  );
}

/** A toolCall state value as a stage name: `"guard"`, `"preExecuteWaiting"`; a nested value `{ a: "b" }` → `a.b`. */
export function stageOf(value: unknown): string {
  return stateValuePath(value).join('.');
}

const callIdOf = (actor: AnyActorRef): string | undefined => (actor.getSnapshot() as { context?: { request?: { callId?: string } } }).context?.request?.callId;

export function CallList(props: { turn: TurnHandle; events: readonly LogEvent[]; approvals: ApprovalStore }) {
  const { turn, events, approvals } = props;
  const pending = useSyncExternalStore(approvals.subscribe, approvals.pending);
  // Call actors stop once their result is in; remember each call's actor (ids are reused per step, the actors are not).
  const actors = useRef(new Map<string, AnyActorRef>()).current;
  for (const actor of useCallActors(turn)) {
    const callId = callIdOf(actor);
    if (callId !== undefined) actors.set(`${(actor.getSnapshot() as { context: { where?: { stepIndex?: number } } }).context.where?.stepIndex}/${callId}`, actor);
  }
  const mine = events.filter((e) => 'turnId' in e && e.turnId === turn.turnId);
  const calls = mine.filter((e): e is CallEvent => e.type === 'tool/call');
  const results = new Map(mine.filter((e): e is ResultEvent => e.type === 'tool/result').map((e) => [`${e.stepIndex}/${e.callId}`, e.result]));
  if (calls.length === 0) return null;
  return (
    <ol className="calls">
      {calls.map((c) => {
        const key = `${c.stepIndex}/${c.callId}`;
        const result = results.get(key);
        return (
          <CallRow
            key={key}
            call={c}
            result={result}
            actor={actors.get(key)}
            approval={result ? undefined : pending.find((p) => p.callId === c.callId)}
          />
        );
      })}
    </ol>
  );
}

function CallRow(props: { call: CallEvent; result: ToolResult | undefined; actor: AnyActorRef | undefined; approval: PendingApproval | undefined }) {
  const { call, result, actor, approval } = props;
  const liveStage = useSelector(actor, (s) => (s ? stageOf((s as { value: unknown }).value) : undefined));
  const stage = result ? (result.isError ? (result.error?.code ?? 'error') : 'ok') : (liveStage ?? 'queued');
  const state = result ? (result.isError ? 'error' : 'ok') : 'live';
  return (
    <li className={`call ${state}`} data-call-id={call.callId} data-step={call.stepIndex} data-stage={stage}>
      <span className="index">
        step {call.stepIndex} #{call.index}
      </span>
      <code className="tool">{call.toolName}</code>
      <code className="args">{argsText(call.input)}</code>
      <span className="stage">{stage}</span>
      {liveStage === 'settled' && !result ? <span className="note">result held until the calls before it commit</span> : null}
      {result ? <span className="content">{result.content.slice(0, 80)}</span> : null}
      {approval ? <ApprovalButtons approval={approval} /> : null}
    </li>
  );
}

function ApprovalButtons(props: { approval: PendingApproval }) {
  const { approval } = props;
  const answer = (a: ApprovalAnswer) => () => approval.answer(a);
  return (
    <span className="approval" role="group" aria-label={`approve ${approval.toolName}`}>
      <span className="reason">{approval.reason ?? 'asks for approval'}</span>
      <button onClick={answer('allowed-once')}>Allow once</button>
      <button onClick={answer('allowed-always')}>Allow always</button>
      <button onClick={answer('denied')}>Deny</button>
    </span>
  );
}

function argsText(input: unknown): string {
  const text = typeof input === 'string' ? input : JSON.stringify(input);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}
