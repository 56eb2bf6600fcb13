/**
 * The live terminal view of `dsh run`, as a pure projection: a state fed by log events, XState
 * inspection events of the turn (each call's stage, the model's text deltas) and the approval
 * prompt, and a function from that state to lines. No terminal here: the renderer
 * (terminalRenderer.ts) draws the lines; tests read them directly.
 *
 * Lines are split in two: `stable` lines never change once shown (earlier steps, notes), `live`
 * lines are redrawn (the running step's text and one row per tool call: stage, spinner, elapsed
 * time). Every line is wrapped to the width, so the renderer can count them.
 */
import { describeProvenance } from '../../protocol/describeProvenance.js';
import type { InspectionEvent } from 'xstate';
import type { ApprovalPreview, LogEvent } from '../../protocol/index.js';
import { stateValuePath } from '../../runtime/inspection/stateValuePath.js';
import { visible } from '../../protocol/visibleText.js';
import { toolCallSnapshotOf } from '../../../machines/snapshotSelectors.js';

export interface CallRow {
  callId: string;
  toolName: string;
  /** The arguments, as one short line. */
  args: string;
  /** The call's pipeline stage (a state of machines/toolCall.ts, readable), or `done`. */
  stage: string;
  /** ms (wall clock) when the call was seen; when it settled. */
  startedAt: number;
  endedAt?: number;
  error?: { code: string; message: string };
  /** Who denied, asked about or blocked it (the result's `decision`, as one line). */
  decidedBy?: string;
  /** The result's first line, when it succeeded. */
  summary?: string;
  /**
   * A command that ran and exited non-zero (its result's `metadata.exitCode`): the call succeeded
   * (SPEC §6: the codes are for failures of the call), but the row says how the command ended,
   * with the last lines of its output.
   */
  exit?: { code: number; tail: string[] };
  /** The latest progress the call reported (`tool/progress`), shown under its row while it runs. */
  progress?: string;
  /** The tail of the output it reported so far (the progress line is its last non-empty line). */
  outputTail?: string;
}

export interface PendingApproval {
  callId: string;
  toolName: string;
  args: string;
  reason?: string;
  /** What the call would do (a diff, the command, the arguments), shown under the question. */
  preview?: ApprovalPreview;
  /** The reason for a denial being typed (after `r`), when one is. */
  denyReason?: string;
  /** Whether the arguments hold control characters (shown escaped; the question says so). */
  controls?: boolean;
}

/** How a line is drawn: plain, or coloured by what it is (the renderer's `paint`). */
export type LineKind = 'plain' | 'added' | 'removed' | 'hunk' | 'meta' | 'command';
export type Paint = (kind: LineKind, line: string) => string;
export const plainPaint: Paint = (_kind, line) => line;

/** ANSI colours for a terminal (green additions, red removals, cyan hunk headers, dim file names). */
export const ansiPaint: Paint = (kind, line) => {
  switch (kind) {
    case 'added':
      return `\x1b[32m${line}\x1b[39m`;
    case 'removed':
      return `\x1b[31m${line}\x1b[39m`;
    case 'hunk':
      return `\x1b[36m${line}\x1b[39m`;
    case 'meta':
      return `\x1b[2m${line}\x1b[22m`;
    case 'command':
      return `\x1b[1m${line}\x1b[22m`;
    default:
      return line;
  }
};

/** What kind a line of a preview is. */
function previewLineKind(preview: ApprovalPreview, line: string): LineKind {
  if (preview.kind === 'command') return 'command';
  if (preview.kind !== 'diff') return 'plain';
  if (line.startsWith('+++ ') || line.startsWith('--- ')) return 'meta';
  if (line.startsWith('@@')) return 'hunk';
  if (line.startsWith('+')) return 'added';
  if (line.startsWith('-')) return 'removed';
  return 'plain';
}

/** The preview's lines as shown under a question: wrapped, painted, at most `maxLines` of them. */
export function previewLines(preview: ApprovalPreview, width: number, maxLines: number, paint: Paint = plainPaint): string[] {
  const out: string[] = [];
  const lines = preview.text.split('\n');
  let shown = 0;
  for (const line of lines) {
    const kind = previewLineKind(preview, line);
    const wrapped = wrap(`  ${line}`, width);
    if (out.length + wrapped.length > maxLines) break;
    out.push(...wrapped.map((l) => paint(kind, l)));
    shown++;
  }
  if (shown < lines.length) out.push(paint('meta', `  … ${lines.length - shown} more line(s) of the preview (dsh log has them all)`));
  return out;
}

export interface RunViewState {
  /** Lines that are final. */
  stable: string[];
  /** The running step's streamed text. */
  text: string;
  /** Whether `text` came from deltas (then the step's `llm/stream` events are not added again). */
  streamed: boolean;
  calls: CallRow[];
  approval?: PendingApproval;
  /** A line under the rows (e.g. "cancelling…"). */
  status?: string;
  /** What the user is typing while the turn runs (a steering message, sent with Enter). */
  input?: string;
  /** Calls of earlier steps (already in `stable`): late snapshots of theirs are ignored. */
  frozen: readonly string[];
}

export const initialRunView = (): RunViewState => ({ stable: [], text: '', streamed: false, calls: [], frozen: [] });

/** What the view is fed. */
export type RunViewInput =
  | { kind: 'event'; event: LogEvent; now: number }
  | { kind: 'stage'; callId: string; toolName: string; input: unknown; stage: string; now: number }
  | { kind: 'text'; delta: string }
  | { kind: 'approval'; approval: PendingApproval | undefined }
  | { kind: 'status'; status: string | undefined }
  | { kind: 'input'; text: string | undefined }
  | { kind: 'note'; line: string };

const STAGES: Record<string, string> = {
  validating: 'validating',
  preExecute: 'pre-execute',
  preExecuteWaiting: 'pre-execute',
  awaitingApproval: 'awaiting approval',
  guard: 'guard',
  executing: 'running',
  aborting: 'aborting',
  postExecute: 'post-execute',
  postExecuteWaiting: 'post-execute',
  finalizing: 'finalizing',
  settled: 'settled',
};

/** A toolCall machine state value as a readable stage (`'preExecuteWaiting'` → `pre-execute`, `'aborting'` → `aborting`). */
export function stageOf(value: unknown): string {
  const path = stateValuePath(value);
  const full = path.join('.');
  return STAGES[full] ?? STAGES[path[0] ?? ''] ?? full;
}

/** One short line: control characters shown (never obeyed), runs of spaces, tabs and newlines made one space. */
const oneLine = (s: string, max: number) => {
  const t = visible(s).replace(/[ \t\n]+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};

/** The arguments as a short line: a path, pattern or command when there is one, else the JSON. */
export function argsText(input: unknown): string {
  let v: unknown = input;
  if (typeof input === 'string') {
    try {
      v = JSON.parse(input) as unknown;
    } catch {
      return oneLine(input, 60);
    }
  }
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    for (const k of ['command', 'path', 'pattern', 'locator']) if (typeof o[k] === 'string') return oneLine(o[k] as string, 60);
  }
  return oneLine(JSON.stringify(v) ?? '', 60);
}

/**
 * The calls whose machines these inspection events describe: `@xstate.snapshot` of a toolCall
 * actor (its context carries the request) → the call's current stage. Model text deltas too.
 */
export function fromInspection(e: InspectionEvent, now: number): RunViewInput | undefined {
  if (e.type === '@xstate.snapshot') {
    const call = toolCallSnapshotOf(e.snapshot);
    return call && { kind: 'stage', callId: call.request.callId, toolName: call.request.toolName, input: call.request.input, stage: stageOf(call.value), now };
  }
  if (e.type === '@xstate.event') {
    const ev = e.event as { type?: string; kind?: string; delta?: unknown };
    if (ev.type === 'MODEL.TEXT' && ev.kind === 'text' && typeof ev.delta === 'string') return { kind: 'text', delta: ev.delta };
  }
  return undefined;
}

/** Lines of a failed command's output shown under its row. */
export const EXIT_TAIL_LINES = 5;

/** A successful call whose command exited non-zero: the code and the last lines of its output. */
function exitOf(r: { content: string; metadata?: Readonly<Record<string, unknown>> }): { exit?: { code: number; tail: string[] } } {
  const code = r.metadata?.exitCode;
  if (typeof code !== 'number' || code === 0) return {};
  // The output, less the `[exit code N]` line the bash tool ends it with.
  const lines = r.content.split('\n').filter((l) => l.trim() && !/^\[exit code -?\d+\]$/.test(l.trim()));
  return { exit: { code, tail: lines.slice(-EXIT_TAIL_LINES).map((l) => oneLine(l, 200)) } };
}

function firstLineOf(s: string): string {
  return oneLine(s.split('\n').find((l) => l.trim()) ?? '', 70);
}

/** Moves the running step's text and rows into the stable lines (a step ended). */
function freeze(state: RunViewState, width: number, now: number): RunViewState {
  return {
    ...state,
    stable: [...state.stable, ...liveLines({ ...state, approval: undefined, status: undefined }, now, width, 0)],
    text: '',
    streamed: false,
    calls: [],
    frozen: [...state.frozen.slice(-500), ...state.calls.map((c) => c.callId)],
  };
}

/** Feeds one input to the view. Pure. */
export function reduceRunView(state: RunViewState, input: RunViewInput, width = 80): RunViewState {
  switch (input.kind) {
    case 'text':
      return { ...state, text: state.text + input.delta, streamed: true };
    case 'approval':
      return { ...state, approval: input.approval };
    case 'status':
      return { ...state, status: input.status };
    case 'input':
      return { ...state, input: input.text };
    case 'note':
      return { ...state, stable: [...state.stable, ...wrap(input.line, width)] };
    case 'stage': {
      if (state.frozen.includes(input.callId)) return state;
      const i = state.calls.findIndex((c) => c.callId === input.callId);
      if (i >= 0) {
        const c = state.calls[i]!;
        if (c.endedAt !== undefined || input.stage === 'settled') return state;
        return { ...state, calls: state.calls.map((r, j) => (j === i ? { ...r, stage: input.stage } : r)) };
      }
      const row: CallRow = { callId: input.callId, toolName: input.toolName, args: argsText(input.input), stage: input.stage, startedAt: input.now };
      return { ...state, calls: [...state.calls, row] };
    }
    case 'event':
      return onEvent(state, input.event, input.now, width);
  }
}

function onEvent(state: RunViewState, e: LogEvent, now: number, width: number): RunViewState {
  const note = (line: string) => ({ ...state, stable: [...state.stable, ...wrap(line, width)] });
  switch (e.type) {
    case 'turn/start':
      return note(`› ${e.input}`);
    case 'llm/stream':
      if (e.kind !== 'text' || state.streamed) return state;
      return { ...state, text: state.text + e.text };
    case 'tool/call': {
      if (state.calls.some((c) => c.callId === e.callId)) return state;
      return { ...state, calls: [...state.calls, { callId: e.callId, toolName: e.toolName, args: argsText(e.input), stage: 'queued', startedAt: now }] };
    }
    case 'tool/result': {
      const r = e.result;
      const known = state.calls.some((c) => c.callId === e.callId);
      const base: CallRow = known
        ? state.calls.find((c) => c.callId === e.callId)!
        : { callId: e.callId, toolName: e.toolName, args: '', stage: 'done', startedAt: now };
      const row: CallRow = {
        ...base,
        stage: 'done',
        endedAt: now,
        ...(r.isError ? { error: { code: r.error?.code ?? 'ERROR', message: r.error?.message ?? r.content } } : { summary: firstLineOf(r.content), ...exitOf(r) }),
        ...(r.decision ? { decidedBy: describeProvenance(r.decision) } : {}),
      };
      return { ...state, calls: known ? state.calls.map((c) => (c.callId === e.callId ? row : c)) : [...state.calls, row] };
    }
    case 'tool/progress': {
      const i = state.calls.findIndex((c) => c.callId === e.callId);
      const c = state.calls[i];
      if (!c || c.endedAt !== undefined) return state;
      const outputTail = e.output !== undefined ? ((c.outputTail ?? '') + e.output).slice(-400) : c.outputTail;
      const lastLine = outputTail?.split('\n').filter((l) => l.trim()).at(-1);
      const status = [e.progress !== undefined ? `${e.progress}${e.total !== undefined ? `/${e.total}` : ''}` : '', e.message ?? ''].filter(Boolean).join(' ');
      const progress = oneLine([status, lastLine ?? ''].filter(Boolean).join(' · '), 200);
      return { ...state, calls: state.calls.map((r, j) => (j === i ? { ...r, outputTail, ...(progress ? { progress } : {}) } : r)) };
    }
    case 'user/steer':
      return note(`› ${e.text}  (steering)`);
    case 'step/end':
      return freeze(state, width, now);
    case 'turn/end': {
      const s = state.calls.length || state.text ? freeze(state, width, now) : state;
      return { ...s, status: undefined, stable: [...s.stable, ...wrap(`turn ${e.outcome}${e.error ? `: ${e.error}` : ''}`, width)] };
    }
    case 'agent/request-error':
      return note(`! model request failed (${e.kind}${e.status ? ` ${e.status}` : ''}), ${e.action}${e.delayMs !== undefined ? ` in ${e.delayMs} ms` : ''}: ${e.message}`);
    case 'warning':
      return note(`! ${e.code}: ${e.message}`);
    case 'hook/failed':
      return note(`! ${e.hook} "${e.listener}" failed (${e.failed}): ${e.message}`);
    case 'context/compacted':
      return note(`· context compacted${e.foldedTurnIds?.length ? ` (${e.foldedTurnIds.length} old turn(s) summarised)` : ''}: ${e.beforeChars} → ${e.afterChars} chars`);
    default:
      return state;
  }
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

function elapsed(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms / 1000)}s`;
}

/**
 * Splits a line to lines of at most `width` characters (code points), at a space when there is one
 * in the second half. Every line of the view passes through here, so here its control characters
 * are made visible (SPEC §10.6): a model's `\x1b[2K` or `\r` is drawn as text, never obeyed.
 */
export function wrap(line: string, width: number): string[] {
  const w = Math.max(10, width);
  const out: string[] = [];
  for (const raw of visible(line).split('\n')) {
    let cps = Array.from(raw);
    if (cps.length === 0) out.push('');
    while (cps.length > 0) {
      if (cps.length <= w) {
        out.push(cps.join(''));
        break;
      }
      const space = cps.lastIndexOf(' ', w);
      const cut = space >= w / 2 ? space : w;
      out.push(cps.slice(0, cut).join(''));
      cps = cps.slice(space >= w / 2 ? cut + 1 : cut);
    }
  }
  return out;
}

/** One call's row(s): mark, tool, arguments, stage, elapsed; an error in full under it. */
export function callLines(c: CallRow, now: number, width: number, frame: number): string[] {
  const mark = c.endedAt === undefined ? SPINNER[frame % SPINNER.length]! : c.error ? '✗' : c.exit ? '!' : '✓';
  const time = elapsed((c.endedAt ?? now) - c.startedAt);
  const what = `${c.toolName}${c.args ? ` ${c.args}` : ''}`;
  const stage = c.endedAt === undefined ? c.stage : c.error ? c.error.code : c.exit ? `exit ${c.exit.code}` : 'done';
  const lines = wrap(`${mark} ${what}  ${stage}  ${time}`, width);
  // The latest progress, one line under the row, while the call runs.
  if (c.endedAt === undefined && c.progress) lines.push(`    ${oneLine(`⋯ ${c.progress}`, Math.max(10, width - 4))}`);
  if (c.error) lines.push(...wrap(`    ${c.error.code}: ${c.error.message}`, width));
  if (c.exit) for (const l of c.exit.tail) lines.push(...wrap(`    │ ${l}`, width));
  if (c.error && c.decidedBy) lines.push(...wrap(`    decided: ${c.decidedBy}`, width));
  return lines;
}

interface LiveOptions {
  paint?: Paint;
  /** The most lines a preview takes (the terminal's height bounds what can be redrawn). */
  maxPreviewLines?: number;
}

function liveLines(state: RunViewState, now: number, width: number, frame: number, o: LiveOptions = {}): string[] {
  const lines: string[] = [];
  if (state.text) lines.push(...wrap(state.text.trimEnd(), width));
  for (const c of state.calls) lines.push(...callLines(c, now, width, frame));
  if (state.approval) {
    const a = state.approval;
    lines.push(...wrap(`? allow ${a.toolName} ${a.args}${a.reason ? ` (${a.reason})` : ''}`, width));
    if (a.controls) lines.push(...wrap('  ! the arguments hold control characters, shown as \\uXXXX: what runs is exactly what is shown', width));
    if (a.preview) lines.push(...previewLines(a.preview, width, Math.max(3, o.maxPreviewLines ?? 40), o.paint));
    if (a.denyReason !== undefined) lines.push(...wrap(`  deny, because› ${a.denyReason}`, width), ...wrap('  (Enter sends the denial with this reason to the model; Esc goes back)', width));
    else lines.push(...wrap('  [y] allow once  [a] allow always  [n] deny  [r] deny with a reason', width));
  }
  if (state.status) lines.push(...wrap(state.status, width));
  if (state.input) lines.push(...wrap(`steer› ${state.input}`, width));
  return lines;
}

/** The view as lines: `stable` (final) and `live` (redrawn each frame). Pure. */
export function renderRunView(state: RunViewState, options: { now: number; width: number; frame?: number } & LiveOptions): { stable: string[]; live: string[] } {
  return { stable: state.stable, live: liveLines(state, options.now, options.width, options.frame ?? 0, options) };
}
