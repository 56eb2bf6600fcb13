/**
 * The inspector page's model, pure and browser-safe: the session as it stood at one point of its
 * log (`seq <= at`), as turns, steps and calls, each with the state its machine was in (named as
 * the generated diagrams name states), and each call's stage timings from its result's
 * `metadata.durationsMs`. Live actor states (from XState inspection on the server) refine the
 * log's coarse view while the page follows the end of a running session.
 */
import type { ApprovalPreview, DecisionProvenance, LogEvent } from '../../../protocol/index.js';
import { CALL_STAGE_NAMES } from '../../../../machines/callStageNames.js';
import type { ActorKind, ActorState } from '../actorStates.js';

/**
 * The toolCall stages in pipeline order, as `result.metadata.durationsMs` names them: the machines'
 * own list (the server serves machines/callStageNames.js to the page beside its modules, assets.ts).
 */
export const STAGES = CALL_STAGE_NAMES;

export interface CallView {
  callId: string;
  toolName: string;
  index: number;
  turnId?: string;
  stepIndex?: number;
  args: string;
  callSeq: number;
  resultSeq?: number;
  /** The toolCall machine's state (a diagram state name). */
  state: string;
  ok?: boolean;
  error?: { code: string; message: string };
  /** Who denied, asked about or blocked it (the result's `decision`, as one line). */
  decidedBy?: string;
  /** The result's first line. */
  summary?: string;
  /** The whole result as the model got it (its content), failed or not. */
  content?: string;
  /** A command's exit code (`result.metadata.exitCode`: a number, or null when a signal ended it). */
  exitCode?: number | null;
  /** ms per stage entered, and `total` (present when the session collected stage marks). */
  durations?: Record<string, number>;
  approval?: { requestSeq: number; reason?: string; answer?: string; answerSeq?: number; preview?: ApprovalPreview; denyReason?: string };
  /** The latest `tool/progress` of the call, as one line (status, then the last line of output). */
  progress?: { seq: number; text: string };
}

export interface StepView {
  key: string;
  turnId: string;
  stepIndex: number;
  startSeq: number;
  endSeq?: number;
  state: string;
  callIds: string[];
  finishReason?: string;
  text: string;
}

export interface TurnView {
  turnId: string;
  input: string;
  startSeq: number;
  endSeq?: number;
  state: string;
  outcome?: string;
  steps: StepView[];
}

export interface SessionView {
  at: number;
  turns: TurnView[];
  steps: Map<string, StepView>;
  calls: CallView[];
  callById: Map<string, CallView>;
}

export const stepKey = (turnId: string, stepIndex: number) => `${turnId}/${stepIndex}`;

const oneLine = (s: string, max: number) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};

/** The arguments as a short line: a path, pattern or command when there is one, else the JSON. */
export function argsLine(input: unknown): string {
  let v: unknown = input;
  if (typeof input === 'string') {
    try {
      v = JSON.parse(input) as unknown;
    } catch {
      return oneLine(input, 80);
    }
  }
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    for (const k of ['command', 'path', 'pattern', 'locator']) if (typeof o[k] === 'string') return oneLine(o[k] as string, 80);
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(v);
  } catch {
    json = String(v);
  }
  return oneLine(json ?? '', 80);
}

/** The session as it stood after event `at` (all of it when `at` is past the end). */
export function sessionAt(events: readonly LogEvent[], at: number): SessionView {
  const view: SessionView = { at, turns: [], steps: new Map(), calls: [], callById: new Map() };
  const turns = new Map<string, TurnView>();
  for (const e of events) {
    if (e.seq > at) break;
    switch (e.type) {
      case 'turn/start': {
        const t: TurnView = { turnId: e.turnId, input: e.input, startSeq: e.seq, state: 'stepping', steps: [] };
        turns.set(e.turnId, t);
        view.turns.push(t);
        break;
      }
      case 'turn/end': {
        const t = turns.get(e.turnId);
        if (t) Object.assign(t, { state: 'done', endSeq: e.seq, outcome: e.outcome });
        break;
      }
      case 'step/start': {
        const s: StepView = { key: stepKey(e.turnId, e.stepIndex), turnId: e.turnId, stepIndex: e.stepIndex, startSeq: e.seq, state: 'requesting', callIds: [], text: '' };
        view.steps.set(s.key, s);
        turns.get(e.turnId)?.steps.push(s);
        break;
      }
      case 'step/end': {
        const s = view.steps.get(stepKey(e.turnId, e.stepIndex));
        if (s) Object.assign(s, { state: 'done', endSeq: e.seq, finishReason: e.finishReason });
        break;
      }
      case 'llm/stream': {
        const s = view.steps.get(stepKey(e.turnId, e.stepIndex));
        if (s && e.kind === 'text') s.text += e.text;
        break;
      }
      case 'agent/request-error': {
        const s = view.steps.get(stepKey(e.turnId, e.stepIndex));
        if (s) s.state = e.action === 'retry' ? 'backingOff' : e.action === 'compact' ? 'compacting' : 'ending';
        break;
      }
      case 'tool/call': {
        const c: CallView = {
          callId: e.callId,
          toolName: e.toolName,
          index: e.index,
          ...(e.turnId !== undefined ? { turnId: e.turnId } : {}),
          ...(e.stepIndex !== undefined ? { stepIndex: e.stepIndex } : {}),
          args: argsLine(e.input),
          callSeq: e.seq,
          state: 'validating',
        };
        view.calls.push(c);
        view.callById.set(c.callId, c);
        if (e.turnId !== undefined && e.stepIndex !== undefined) {
          const s = view.steps.get(stepKey(e.turnId, e.stepIndex));
          if (s) {
            s.callIds.push(c.callId);
            if (s.state === 'requesting') s.state = 'awaitingTools';
          }
        }
        break;
      }
      case 'tool/approval-request': {
        const c = view.callById.get(e.callId);
        if (c) {
          c.approval = { requestSeq: e.seq, ...(e.reason !== undefined ? { reason: e.reason } : {}), ...(e.preview ? { preview: e.preview } : {}) };
          c.state = 'awaitingApproval';
        }
        break;
      }
      case 'tool/approval-answer': {
        const c = view.callById.get(e.callId);
        if (c) {
          c.approval = { ...(c.approval ?? { requestSeq: e.seq }), answer: e.answer, answerSeq: e.seq, ...(e.reason ? { denyReason: e.reason } : {}) };
          if (c.state === 'awaitingApproval') c.state = e.answer === 'allowed-once' || e.answer === 'allowed-always' || e.answer === 'remembered' ? 'executing' : 'finalizing';
        }
        break;
      }
      case 'tool/progress': {
        const c = view.callById.get(e.callId);
        if (c) c.progress = { seq: e.seq, text: progressLine(e) };
        break;
      }
      case 'tool/result': {
        const c = view.callById.get(e.callId);
        if (!c) break;
        const r = e.result;
        c.resultSeq = e.seq;
        c.state = 'settled';
        c.ok = !r.isError;
        if (r.isError) c.error = { code: r.error?.code ?? 'ERROR', message: r.error?.message ?? r.content };
        if (r.decision) c.decidedBy = provenanceLine(r.decision);
        else c.summary = oneLine(r.content.split('\n').find((l) => l.trim()) ?? '', 120);
        c.content = r.content;
        const exit = (r.metadata as Record<string, unknown> | undefined)?.exitCode;
        if (typeof exit === 'number' || exit === null) c.exitCode = exit;
        const d = (r.metadata as Record<string, unknown> | undefined)?.durationsMs;
        if (d && typeof d === 'object') {
          const durations: Record<string, number> = {};
          for (const [k, v] of Object.entries(d as Record<string, unknown>)) if (typeof v === 'number' && Number.isFinite(v)) durations[k] = v;
          c.durations = durations;
        }
        break;
      }
      default:
        break;
    }
  }
  return view;
}

/** A `tool/progress` as one line: `3/10 status · last output line`. */
export function progressLine(e: Extract<LogEvent, { type: 'tool/progress' }>): string {
  const status = [e.progress !== undefined ? `${e.progress}${e.total !== undefined ? `/${e.total}` : ''}` : '', e.message !== undefined ? oneLine(e.message, 60) : '']
    .filter(Boolean)
    .join(' ');
  const lastLine = e.output?.split('\n').filter((l) => l.trim()).at(-1);
  return [status, lastLine !== undefined ? oneLine(lastLine, 100) : ''].filter(Boolean).join(' · ');
}

/** One line of the log timeline. */
export interface LogRow {
  seq: number;
  type: string;
  time: number;
  /** The actor the event belongs to (the call, else the step, else the turn). */
  actor?: { kind: ActorKind; key: string };
  callId?: string;
  /** An error code, an outcome, an answer: what to read first. */
  code?: string;
  text: string;
}

export function logRow(e: LogEvent): LogRow {
  const row: LogRow = { seq: e.seq, type: e.type, time: e.time, text: '' };
  const ev = e as { turnId?: string; stepIndex?: number; callId?: string };
  if (typeof ev.callId === 'string') {
    row.callId = ev.callId;
    row.actor = { kind: 'call', key: ev.callId };
  } else if (typeof ev.turnId === 'string' && typeof ev.stepIndex === 'number') row.actor = { kind: 'step', key: stepKey(ev.turnId, ev.stepIndex) };
  else if (typeof ev.turnId === 'string') row.actor = { kind: 'turn', key: ev.turnId };
  switch (e.type) {
    case 'turn/start':
      row.text = oneLine(e.input, 100);
      break;
    case 'turn/end':
      row.code = e.outcome;
      row.text = `${e.steps} step(s)${e.error ? `: ${oneLine(e.error, 80)}` : ''}`;
      break;
    case 'step/end':
      row.text = `${e.finishReason}, ${e.toolCalls} call(s)`;
      break;
    case 'llm/stream':
      row.text = oneLine(e.text, 100);
      break;
    case 'tool/call':
      row.text = `${e.toolName} ${argsLine(e.input)}`;
      break;
    case 'tool/result':
      if (e.result.isError) row.code = e.result.error?.code ?? 'ERROR';
      row.text = `${e.toolName} ${e.result.isError ? oneLine(e.result.error?.message ?? e.result.content, 80) : 'ok'}`;
      break;
    case 'tool/approval-request':
      row.text = `${e.toolName}${e.reason ? `: ${oneLine(e.reason, 80)}` : ''}`;
      break;
    case 'tool/approval-answer':
      row.code = e.answer;
      break;
    case 'agent/request-error':
      row.code = e.status !== undefined ? `${e.kind} ${e.status}` : e.kind;
      row.text = `${e.action}: ${oneLine(e.message, 80)}`;
      break;
    case 'hook/failed':
      row.code = `HOOK_FAILED (${e.failed})`;
      row.text = `${e.hook} ${e.listener}: ${oneLine(e.message, 80)}`;
      break;
    case 'warning':
      row.code = e.code;
      row.text = oneLine(e.message, 100);
      break;
    case 'context/compacted':
      row.text = `${e.strategy}: ${e.beforeChars} → ${e.afterChars} chars`;
      break;
    case 'tool/spilled':
      row.text = `${e.bytes} bytes → ${e.locator}`;
      break;
    case 'tool/progress':
      row.text = progressLine(e);
      break;
    case 'user/steer':
      row.text = oneLine(e.text, 100);
      break;
    case 'turn/suspended':
      row.code = 'suspended';
      row.text = `waiting for approval of ${e.calls.map((c) => c.callId).join(', ')}`;
      break;
    default:
      break;
  }
  return row;
}

/** A question the server waits on now (an `answerable` call of the wire protocol), as the page shows it. */
export interface PendingQuestion {
  callId: string;
  toolName: string;
  /** The arguments as one short line. */
  args: string;
  reason?: string;
  /** What the call would do: a diff, the command, or the arguments. */
  preview?: ApprovalPreview;
  /** The `seq` of its `tool/approval-request`: where the answer is posted (`…/approvals/:approvalId`). */
  approvalId: number;
}

/** The questions `answerable` names, oldest first, as the log (`view`, at its end) shows them. */
export function pendingQuestions(view: SessionView, answerable: readonly { callId: string }[]): PendingQuestion[] {
  const pending: PendingQuestion[] = [];
  for (const { callId } of answerable) {
    const c = view.callById.get(callId);
    if (!c?.approval) continue;
    const { requestSeq, reason, preview } = c.approval;
    pending.push({ callId, toolName: c.toolName, args: c.args, approvalId: requestSeq, ...(reason !== undefined ? { reason } : {}), ...(preview ? { preview } : {}) });
  }
  return pending;
}

/** Live states seen for one actor, oldest first. */
export type LiveHistory = Map<string, ActorState[]>;

export const actorId = (kind: ActorKind, key: string) => `${kind}:${key}`;

/** Records a live actor state; returns whether it was news. */
export function recordLive(history: LiveHistory, a: ActorState): boolean {
  const id = actorId(a.kind, a.key);
  const list = history.get(id) ?? [];
  if (list.at(-1)?.state === a.state) return false;
  list.push(a);
  history.set(id, list);
  return true;
}

/** The diagram states to highlight for a state name: itself and its parents (`a_b` → `a`, `a_b`; the toolCall machine is flat). */
export function highlightedStates(state: string): string[] {
  const parts = state.split('_');
  return parts.map((_, i) => parts.slice(0, i + 1).join('_'));
}

/**
 * A result's `decision` as one line, as protocol/describeProvenance.ts writes it (the page is
 * served as its own modules, page/*.js, so it cannot import that file).
 */
function provenanceLine(d: DecisionProvenance): string {
  return `${d.stage} ${d.outcome} by ${d.by}${d.rule === undefined ? '' : ` (${d.rule})`}`;
}
