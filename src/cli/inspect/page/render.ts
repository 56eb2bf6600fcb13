/**
 * The inspector page's panels, drawn from the model: the actors (turns, steps, a paged list of
 * calls), the selected actor with its statechart (the generated diagram, current state
 * highlighted) and, for a call, its stages with their timings, and the questions waiting for an
 * answer. Text from the log is only ever set as text (it is model output: hostile).
 */
import type { ActorKind, ActorState } from '../actorStates.js';
import { actorId, highlightedStates, STAGES, type CallView, type PendingQuestion, type SessionView, type StepView, type TurnView } from './model.js';

export const CALLS_PER_PAGE = 50;

/** The answers the page gives (the wire protocol's, docs/protocol.md). */
export type Answer = 'allow-once' | 'allow-always' | 'deny';

export interface Selection {
  kind: ActorKind;
  key: string;
}

export interface RenderInput {
  view: SessionView;
  /** Following the end of a live session: live actor states apply. */
  atEnd: boolean;
  live: boolean;
  liveHistory: ReadonlyMap<string, readonly ActorState[]>;
  pending: readonly PendingQuestion[];
  selected: Selection | undefined;
  callPage: number;
}

export interface Handlers {
  select(s: Selection): void;
  page(n: number): void;
  /** `reason`: a deny's reason, which the model gets with the result. */
  answer(callId: string, answer: Answer, reason?: string): void;
}

type Child = Node | string | undefined | false;

export function h(tag: string, attrs: Record<string, string | undefined> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) el.setAttribute(k, v);
  for (const c of children) if (c !== undefined && c !== false) el.append(c);
  return el;
}

/** The state an actor is in: the live one while following a running session, else the log's. */
export function currentState(input: RenderInput, kind: ActorKind, key: string, fromLog: string): string {
  if (!input.atEnd) return fromLog;
  const live = input.liveHistory.get(actorId(kind, key))?.at(-1);
  if (!live) return fromLog;
  // The log has the last word once it says the actor finished.
  if (fromLog === 'settled' || fromLog === 'done') return fromLog;
  return live.state;
}

const fmtMs = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms < 1000 ? ms.toFixed(1) : `${(ms / 1000).toFixed(2)} s`).replace(/\.0+$/, '') + (ms < 1000 ? ' ms' : '');

function answerButtons(callId: string, handlers: Handlers): HTMLElement {
  const b = (answer: Answer, label: string, testid: string) => {
    const el = h('button', { type: 'button', 'data-testid': testid, 'data-call-id': callId, class: `answer ${answer}` }, label);
    el.addEventListener('click', () => handlers.answer(callId, answer));
    return el;
  };
  // A reason is asked for in the browser's own prompt: a field in the page would be redrawn away.
  const withReason = h('button', { type: 'button', 'data-testid': 'deny-with-reason', 'data-call-id': callId, class: 'answer deny' }, 'Deny with a reason…');
  withReason.addEventListener('click', () => {
    const reason = window.prompt('Deny: the reason the model is told')?.trim();
    if (reason) handlers.answer(callId, 'deny', reason);
  });
  return h('span', { class: 'answers' }, b('allow-once', 'Allow once', 'approve-once'), b('allow-always', 'Always', 'approve-always'), b('deny', 'Deny', 'deny'), withReason);
}

/** An approval's preview: a diff's lines coloured by kind (set as text: it is model output). */
export function previewBlock(preview: { kind: string; text: string; truncated?: boolean }): HTMLElement {
  const pre = h('pre', { class: `preview ${preview.kind}`, 'data-testid': 'approval-preview', 'data-kind': preview.kind });
  for (const line of preview.text.split('\n')) {
    const kind =
      preview.kind !== 'diff' ? '' : line.startsWith('+++ ') || line.startsWith('--- ') ? 'meta' : line.startsWith('@@') ? 'hunk' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : '';
    pre.append(h('span', kind ? { class: kind } : {}, line), '\n');
  }
  return pre;
}

export function renderApprovals(input: RenderInput, handlers: Handlers): HTMLElement {
  const box = h('section', { class: 'approvals', 'data-testid': 'approvals' });
  if (!input.live || input.pending.length === 0) return box;
  box.append(h('h2', {}, `Waiting for an answer (${input.pending.length})`));
  for (const q of input.pending) {
    const row = h('div', { class: 'question', 'data-testid': 'question', 'data-call-id': q.callId }, h('b', {}, q.toolName), ' ', h('code', {}, q.args), q.reason ? h('span', { class: 'reason' }, ` — ${q.reason}`) : undefined, ' ', answerButtons(q.callId, handlers));
    row.addEventListener('dblclick', () => handlers.select({ kind: 'call', key: q.callId }));
    if (q.preview) row.append(previewBlock(q.preview));
    box.append(row);
  }
  return box;
}

function actorLink(label: Child[], sel: Selection, input: RenderInput, handlers: Handlers, testid: string, state: string): HTMLElement {
  const selected = input.selected?.kind === sel.kind && input.selected.key === sel.key;
  const el = h('button', { type: 'button', class: `actor ${selected ? 'selected' : ''}`, 'data-testid': testid, 'data-key': sel.key, 'data-state': state }, ...label);
  el.addEventListener('click', () => handlers.select(sel));
  return el;
}

export function renderActors(input: RenderInput, handlers: Handlers): HTMLElement {
  const nav = h('nav', { class: 'actors' });
  nav.append(h('h2', {}, 'Turns and steps'));
  if (input.view.turns.length === 0) nav.append(h('p', { class: 'muted' }, 'nothing yet at this point of the log'));
  const tree = h('ul', { class: 'tree' });
  for (const t of input.view.turns) {
    const ts = currentState(input, 'turn', t.turnId, t.state);
    const steps = h('ul', {});
    for (const s of t.steps) {
      const ss = currentState(input, 'step', s.key, s.state);
      steps.append(h('li', {}, actorLink([`step ${s.stepIndex} `, h('span', { class: 'badge' }, ss), ` ${s.callIds.length} call(s)`], { kind: 'step', key: s.key }, input, handlers, 'step-link', ss)));
    }
    tree.append(h('li', {}, actorLink([`${t.turnId} `, h('span', { class: 'badge' }, t.outcome ?? ts), ` ${t.input.slice(0, 40)}`], { kind: 'turn', key: t.turnId }, input, handlers, 'turn-link', ts), steps));
  }
  nav.append(tree);

  const calls = input.view.calls;
  const pages = Math.max(1, Math.ceil(calls.length / CALLS_PER_PAGE));
  const page = Math.min(Math.max(0, input.callPage), pages - 1);
  nav.append(h('h2', {}, `Calls (${calls.length})`));
  const list = h('ol', { class: 'calls', 'data-testid': 'calls', start: String(page * CALLS_PER_PAGE + 1) });
  for (const c of calls.slice(page * CALLS_PER_PAGE, (page + 1) * CALLS_PER_PAGE)) {
    const st = currentState(input, 'call', c.callId, c.state);
    // A command that exited non-zero is a call that succeeded (SPEC §6), shown apart from both.
    const exited = c.ok === true && typeof c.exitCode === 'number' && c.exitCode !== 0;
    const status = exited ? 'exited' : c.ok === true ? 'ok' : c.ok === false ? 'failed' : 'running';
    list.append(
      h(
        'li',
        { class: status },
        actorLink([h('span', { class: 'badge' }, c.error?.code ?? (exited ? `exit ${c.exitCode}` : st)), ` ${c.toolName} `, h('code', {}, c.args), c.durations?.total !== undefined ? h('span', { class: 'muted' }, ` ${fmtMs(c.durations.total)}`) : undefined], { kind: 'call', key: c.callId }, input, handlers, 'call-row', st),
        // The call's latest progress (tool/progress), under its row while it runs.
        c.progress && c.ok === undefined ? h('div', { class: 'muted progress', 'data-testid': 'call-progress' }, `⋯ ${c.progress.text}`) : undefined,
      ),
    );
  }
  nav.append(list);
  nav.append(...conversation(input.view));
  if (pages > 1) {
    const btn = (label: string, to: number, testid: string) => {
      const b = h('button', { type: 'button', 'data-testid': testid }, label) as HTMLButtonElement;
      b.disabled = to < 0 || to >= pages;
      b.addEventListener('click', () => handlers.page(to));
      return b;
    };
    nav.append(h('div', { class: 'pager', 'data-testid': 'pager' }, btn('‹ prev', page - 1, 'page-prev'), ` page ${page + 1} of ${pages} `, btn('next ›', page + 1, 'page-next')));
  }
  return nav;
}

/** The conversation so far: each turn's prompt, its steers, and the model's text of each step (as text: hostile). */
function conversation(view: SessionView): HTMLElement[] {
  const out: HTMLElement[] = [h('h2', {}, 'Conversation')];
  const box = h('div', { class: 'conversation', 'data-testid': 'conversation' });
  for (const t of view.turns) {
    box.append(h('div', { class: 'conv-user', 'data-testid': 'conv-user' }, `› ${t.input}`));
    for (const s of t.steps) if (s.text.trim()) box.append(h('pre', { class: 'conv-model', 'data-testid': 'conv-model', 'data-key': s.key }, s.text));
  }
  if (view.turns.length === 0) box.append(h('p', { class: 'muted' }, 'nothing said yet at this point of the log'));
  out.push(box);
  return out;
}

/** Zoom steps of the diagram (1 = fit the column). */
export const DIAGRAM_ZOOMS = [1, 1.5, 2, 3, 4] as const;

/** The diagram panel: one SVG per machine, kept, its classes changed to highlight the state; zoomable. */
export class DiagramPanel {
  readonly element = h('div', { class: 'diagram', 'data-testid': 'diagram' });
  private readonly canvas = h('div', { class: 'diagram-canvas', 'data-testid': 'diagram-canvas' });
  private readonly svgs = new Map<string, Promise<SVGSVGElement | undefined>>();
  private shown = '';
  private zoom = 0;

  constructor() {
    const label = h('span', { class: 'muted', 'data-testid': 'zoom-level' }, '100%');
    const btn = (text: string, testid: string, to: () => number) => {
      const b = h('button', { type: 'button', 'data-testid': testid, title: testid.replace('-', ' ') }, text);
      b.addEventListener('click', () => {
        this.zoom = Math.max(0, Math.min(DIAGRAM_ZOOMS.length - 1, to()));
        label.textContent = `${DIAGRAM_ZOOMS[this.zoom]! * 100}%`;
        this.applyZoom();
      });
      return b;
    };
    this.element.append(h('div', { class: 'zoom' }, btn('−', 'zoom-out', () => this.zoom - 1), ' ', label, ' ', btn('+', 'zoom-in', () => this.zoom + 1), ' ', btn('fit', 'zoom-fit', () => 0)), this.canvas);
  }

  private applyZoom(): void {
    const svg = this.canvas.querySelector('svg');
    if (!svg) return;
    const z = DIAGRAM_ZOOMS[this.zoom]!;
    // Set through the CSSOM (allowed by the page's CSP, unlike style attributes).
    svg.style.width = `${z * 100}%`;
    svg.style.maxHeight = z === 1 ? '' : 'none';
    this.element.dataset.zoom = String(z);
  }

  private load(machine: string): Promise<SVGSVGElement | undefined> {
    let p = this.svgs.get(machine);
    if (!p) {
      p = fetch(`/diagrams/${machine}.svg`)
        .then((r) => (r.ok ? r.text() : Promise.reject(new Error(`${machine}.svg: HTTP ${r.status}`))))
        .then((text) => {
          const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
          const svg = doc.documentElement as unknown as SVGSVGElement;
          if (svg.nodeName !== 'svg') return undefined;
          svg.removeAttribute('width');
          svg.removeAttribute('height');
          return document.importNode(svg, true);
        })
        .catch(() => undefined);
      this.svgs.set(machine, p);
    }
    return p;
  }

  /** Shows `machine`'s diagram with `state` (and its parents) highlighted and `visited` stages marked. */
  async show(machine: string, state: string, visited: readonly string[] = []): Promise<void> {
    this.shown = machine;
    const svg = await this.load(machine);
    if (this.shown !== machine) return;
    if (!svg) {
      this.canvas.replaceChildren(h('p', { class: 'muted' }, `no diagram for ${machine}`));
      return;
    }
    if (this.canvas.firstChild !== svg) {
      this.canvas.replaceChildren(svg);
      this.applyZoom();
    }
    this.element.dataset.machine = machine;
    this.element.dataset.state = state;
    svg.querySelectorAll('g[data-state]').forEach((g) => g.classList.remove('current', 'current-parent', 'visited'));
    const states = highlightedStates(state);
    states.forEach((s, i) => svg.querySelector(`g[data-state="${CSS.escape(s)}"]`)?.classList.add(i === states.length - 1 ? 'current' : 'current-parent'));
    for (const v of visited) svg.querySelector(`g[data-state="${CSS.escape(v)}"]`)?.classList.add('visited');
  }
}

function stagesTable(c: CallView, live: readonly ActorState[] | undefined): HTMLElement {
  const box = h('div', { class: 'stages', 'data-testid': 'stages' });
  if (c.durations) {
    const total = c.durations.total ?? STAGES.reduce((n, s) => n + (c.durations?.[s] ?? 0), 0);
    const bar = h('div', { class: 'stage-bar' });
    const table = h('table', {}, h('tr', {}, h('th', {}, 'stage'), h('th', {}, 'time'), h('th', {}, 'share')));
    for (const s of STAGES) {
      const ms = c.durations[s];
      if (ms === undefined) continue;
      const share = total > 0 ? (ms / total) * 100 : 0;
      const seg = h('span', { class: `seg ${s}`, title: `${s}: ${fmtMs(ms)}` });
      seg.style.flexGrow = String(Math.max(share, 0.5));
      bar.append(seg);
      table.append(h('tr', { 'data-testid': 'stage-row', 'data-stage': s }, h('td', {}, h('span', { class: `dot ${s}` }), s), h('td', { class: 'num' }, fmtMs(ms)), h('td', { class: 'num' }, `${share.toFixed(0)}%`)));
    }
    table.append(h('tr', { class: 'total' }, h('td', {}, 'total'), h('td', { class: 'num' }, fmtMs(total)), h('td', {}, '')));
    box.append(h('h3', {}, 'Stages'), bar, table);
  } else if (c.state === 'settled') {
    box.append(h('p', { class: 'muted' }, 'no stage timings: this session did not collect stage marks'));
  }
  if (live && live.length > 0) {
    const t0 = live[0]!.time;
    const list = h('ol', { class: 'live-stages', 'data-testid': 'live-stages' });
    for (const a of live) list.append(h('li', { 'data-state': a.state }, `${a.state} `, h('span', { class: 'muted' }, `+${fmtMs(a.time - t0)}`)));
    box.append(h('h3', {}, 'States seen live'), list);
  }
  return box;
}

function appendAll(el: HTMLElement, ...children: Child[]): void {
  for (const c of children) if (c !== undefined && c !== false) el.append(c);
}

function field(name: string, value: Child): HTMLElement {
  return h('div', { class: 'field' }, h('span', { class: 'name' }, name), h('span', { class: 'value' }, value));
}

export interface DetailOut {
  element: HTMLElement;
  /** Which diagram to show, in what state. */
  diagram?: { machine: string; state: string; visited: string[] };
}

export function renderDetail(input: RenderInput, handlers: Handlers, diagram: HTMLElement): DetailOut {
  const sel = input.selected;
  const box = h('section', { class: 'detail', 'data-testid': 'detail' });
  if (!sel) {
    box.append(h('p', { class: 'muted' }, 'Select a turn, step, call or log entry.'));
    return { element: box };
  }
  box.dataset.kind = sel.kind;
  box.dataset.key = sel.key;
  if (sel.kind === 'call') {
    const c = input.view.callById.get(sel.key);
    if (!c) {
      box.append(h('h2', {}, sel.key), h('p', { class: 'muted', 'data-testid': 'not-yet' }, `not called yet at seq ${input.view.at}`));
      return { element: box };
    }
    const state = currentState(input, 'call', c.callId, c.state);
    const pending = input.live && input.pending.some((q) => q.callId === c.callId);
    appendAll(
      box,
      h('h2', {}, `call ${c.callId} `, h('span', { class: 'badge', 'data-testid': 'detail-state' }, state)),
      field('tool', h('b', {}, c.toolName)),
      field('arguments', h('code', {}, c.args)),
      field('where', `${c.turnId ?? '-'} step ${c.stepIndex ?? '-'}, #${c.index} in its batch (seq ${c.callSeq}${c.resultSeq ? `–${c.resultSeq}` : ''})`),
      c.approval ? field('approval', `${c.approval.reason ?? 'asked'} → ${c.approval.answer ?? 'waiting'}${c.approval.denyReason ? `: ${c.approval.denyReason}` : ''}`) : undefined,
      c.approval?.preview ? field('preview', previewBlock(c.approval.preview)) : undefined,
      pending ? field('answer', answerButtons(c.callId, handlers)) : undefined,
      c.error ? field('error', h('span', { class: 'error', 'data-testid': 'call-error' }, `${c.error.code}: ${c.error.message}`)) : undefined,
      c.decidedBy ? field('decided', h('span', { 'data-testid': 'call-decided' }, c.decidedBy)) : undefined,
      c.exitCode !== undefined ? field('exit code', h('code', { 'data-testid': 'call-exit-code' }, c.exitCode === null ? 'none (ended by a signal)' : String(c.exitCode))) : undefined,
      c.content !== undefined ? field('result', h('pre', { class: 'result', 'data-testid': 'call-result' }, c.content)) : undefined,
      stagesTable(c, input.atEnd ? input.liveHistory.get(actorId('call', c.callId)) : undefined),
      diagram,
    );
    const visited = c.durations ? STAGES.filter((s) => c.durations![s] !== undefined) : [];
    return { element: box, diagram: { machine: 'toolCall', state, visited } };
  }
  if (sel.kind === 'step') {
    const s: StepView | undefined = input.view.steps.get(sel.key);
    if (!s) {
      box.append(h('h2', {}, `step ${sel.key}`), h('p', { class: 'muted', 'data-testid': 'not-yet' }, `not started yet at seq ${input.view.at}`));
      return { element: box };
    }
    const state = currentState(input, 'step', s.key, s.state);
    appendAll(
      box,
      h('h2', {}, `step ${s.stepIndex} of ${s.turnId} `, h('span', { class: 'badge', 'data-testid': 'detail-state' }, state)),
      field('calls', String(s.callIds.length)),
      s.finishReason ? field('finish', s.finishReason) : undefined,
      s.text ? field('model text', h('pre', {}, s.text.slice(0, 2000))) : undefined,
      diagram,
    );
    return { element: box, diagram: { machine: 'step', state, visited: [] } };
  }
  const t: TurnView | undefined = input.view.turns.find((x) => x.turnId === sel.key);
  if (!t) {
    box.append(h('h2', {}, sel.key), h('p', { class: 'muted', 'data-testid': 'not-yet' }, `not started yet at seq ${input.view.at}`));
    return { element: box };
  }
  const state = currentState(input, 'turn', t.turnId, t.state);
  appendAll(
    box,
    h('h2', {}, `turn ${t.turnId} `, h('span', { class: 'badge', 'data-testid': 'detail-state' }, state)),
    field('input', h('pre', {}, t.input.slice(0, 2000))),
    field('steps', String(t.steps.length)),
    t.outcome ? field('outcome', t.outcome) : undefined,
    diagram,
  );
  return { element: box, diagram: { machine: 'turn', state, visited: [] } };
}
