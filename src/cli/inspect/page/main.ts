/**
 * The inspector page: follows the session over the wire protocol (docs/protocol.md) as any page
 * would: an `EventSource` on `/api/sessions/:id/events` (the log's events by `seq`, resumed with
 * `Last-Event-ID` when the connection drops, and the live frames: actor states, stages, the
 * answerable questions, whether the log can still grow), answers as POSTs with an
 * `Idempotency-Key`. It keeps the page state and redraws on each change (at most once a frame).
 * The timeline scrubber picks the point of the log the page shows.
 */
import type { LogEvent } from '../../../protocol/index.js';
import type { LiveFrame } from '../../../protocol/wire.js';
import { logRow, pendingQuestions, recordLive, sessionAt, type LiveHistory, type LogRow } from './model.js';
import { CALLS_PER_PAGE, DiagramPanel, h, renderActors, renderApprovals, renderDetail, type Answer, type Handlers, type Selection } from './render.js';
import { createLogList } from './timeline.js';

const token = new URLSearchParams(location.search).get('t') ?? '';
const meta = (name: string) => document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') ?? '';
const api = `/api/sessions/${encodeURIComponent(meta('dsh-session'))}`;

const state = {
  title: meta('dsh-title'),
  /** Whether the log can still grow: unknown until the server's `session` frame says. */
  live: undefined as boolean | undefined,
  ended: false,
  events: [] as LogEvent[],
  rows: [] as LogRow[],
  at: 0,
  follow: true,
  liveHistory: new Map() as LiveHistory,
  /** The calls whose question the server waits on now (the latest `answerable` frame). */
  answerable: [] as ReadonlyArray<{ callId: string }>,
  selected: undefined as Selection | undefined,
  /** The user picked what is shown: following the end no longer moves the selection. */
  picked: false,
  callPage: 0,
  status: '',
};

const lastSeq = () => state.events.at(-1)?.seq ?? 0;

// ---- layout ----
const title = h('span', { class: 'title' });
const badge = h('span', { class: 'live-badge', 'data-testid': 'mode' });
const status = h('span', { class: 'status', 'data-testid': 'status' });
const scrubber = h('input', { type: 'range', min: '0', max: '0', value: '0', 'data-testid': 'scrubber', 'aria-label': 'position in the log' }) as HTMLInputElement;
const position = h('span', { class: 'position', 'data-testid': 'position' });
const back = h('button', { type: 'button', 'data-testid': 'step-back', title: 'one event back' }, '◀');
const forward = h('button', { type: 'button', 'data-testid': 'step-forward', title: 'one event on' }, '▶');
const follow = h('input', { type: 'checkbox', 'data-testid': 'follow' }) as HTMLInputElement;
const approvalsSlot = h('div', {});
const actorsSlot = h('div', { class: 'col actors-col' });
const detailSlot = h('div', { class: 'col detail-col' });
const diagram = new DiagramPanel();

const handlers: Handlers = {
  select(s) {
    state.selected = s;
    state.picked = true;
    if (s.kind === 'call') {
      const i = sessionAt(state.events, state.at).calls.findIndex((c) => c.callId === s.key);
      if (i >= 0) state.callPage = Math.floor(i / CALLS_PER_PAGE);
    }
    schedule();
  },
  page(n) {
    state.callPage = n;
    schedule();
  },
  answer(callId, answer, reason) {
    void sendAnswer(callId, answer, reason);
  },
};

const logList = createLogList((row) => {
  if (row.actor) handlers.select(row.actor);
});

document.body.append(
  h('header', {}, h('b', {}, 'dsh inspect'), ' ', title, ' ', badge, ' ', status),
  h('section', { class: 'timeline' }, back, scrubber, forward, position, h('label', { class: 'follow' }, follow, ' follow the end')),
  approvalsSlot,
  h('main', {}, actorsSlot, detailSlot, h('div', { class: 'col log-col' }, h('h2', {}, 'Log'), h('div', { class: 'log-head' }, h('span', { class: 'seq' }, 'seq'), h('span', { class: 'type' }, 'event'), h('span', { class: 'call' }, 'call'), h('span', { class: 'code' }, 'code'), h('span', { class: 'text' }, '')), logList.element)),
);

const moveTo = (at: number) => {
  state.at = Math.max(0, Math.min(lastSeq(), at));
  state.follow = state.at === lastSeq();
  schedule();
  logList.reveal(state.at);
};
scrubber.addEventListener('input', () => moveTo(Number(scrubber.value)));
back.addEventListener('click', () => moveTo(state.at - 1));
forward.addEventListener('click', () => moveTo(state.at + 1));
follow.addEventListener('change', () => {
  state.follow = follow.checked;
  // Following the end again: the selection follows the running call too.
  if (state.follow) state.picked = false;
  if (state.follow) moveTo(lastSeq());
});

// ---- drawing ----
let frame = 0;
function schedule(): void {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    draw();
  });
}

function draw(): void {
  const end = lastSeq();
  if (state.follow) state.at = end;
  const view = sessionAt(state.events, state.at);
  // Following the end (and nothing picked by hand): the running call, else the latest one.
  if (!state.selected || (state.follow && !state.picked)) {
    const c = view.calls.find((x) => x.ok === undefined) ?? view.calls.at(-1);
    const t = view.turns.at(-1);
    if (c) state.selected = { kind: 'call', key: c.callId };
    else if (t) state.selected = { kind: 'turn', key: t.turnId };
  }
  title.textContent = state.title;
  document.title = `dsh inspect: ${state.title}`;
  badge.textContent = state.live === true ? 'live' : state.ended ? 'ended' : state.live === false ? 'recorded' : 'connecting…';
  badge.className = `live-badge ${state.live === true ? 'on' : ''}`;
  status.textContent = state.status;
  scrubber.max = String(end);
  scrubber.value = String(state.at);
  follow.checked = state.follow;
  const at = state.events.find((e) => e.seq === state.at);
  position.textContent = `seq ${state.at} of ${end}${at ? ` · ${new Date(at.time).toISOString().slice(11, 23)} · ${at.type}` : ''}`;
  const pending = state.answerable.length === 0 ? [] : pendingQuestions(state.at === end ? view : sessionAt(state.events, end), state.answerable);
  const input = { view, atEnd: state.live === true && state.at === end, live: state.live === true, liveHistory: state.liveHistory, pending, selected: state.selected, callPage: state.callPage };
  approvalsSlot.replaceChildren(renderApprovals(input, handlers));
  actorsSlot.replaceChildren(renderActors(input, handlers));
  const detail = renderDetail(input, handlers, diagram.element);
  detailSlot.replaceChildren(detail.element);
  if (detail.diagram) void diagram.show(detail.diagram.machine, detail.diagram.state, detail.diagram.visited);
  const sel = state.selected ? `${state.selected.kind}:${state.selected.key}` : undefined;
  logList.update(state.rows, state.at, sel);
  document.body.dataset.ready = 'true';
}

// ---- the server ----
function addEvent(e: LogEvent): void {
  if (e.seq <= lastSeq()) return;
  state.events.push(e);
  state.rows.push(logRow(e));
}

async function sendAnswer(callId: string, answer: Answer, reason?: string): Promise<void> {
  const approvalId = sessionAt(state.events, lastSeq()).callById.get(callId)?.approval?.requestSeq;
  try {
    if (approvalId === undefined) throw new Error('no question of this call in the log');
    const body = JSON.stringify({ answer, ...(reason !== undefined ? { reason } : {}) });
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': crypto.randomUUID() };
    const r = await fetch(`${api}/approvals/${approvalId}`, { method: 'POST', headers, body });
    if (r.ok) state.status = `answered ${callId}: ${answer}`;
    else {
      const refused = (await r.json().catch(() => undefined)) as { error?: { message?: string }; winner?: { answer: string } } | undefined;
      state.status = `could not answer ${callId}: ${refused?.winner ? `already answered (${refused.winner.answer})` : (refused?.error?.message ?? `HTTP ${r.status}`)}`;
    }
  } catch (e) {
    state.status = `could not answer ${callId}: ${String(e)}`;
  }
  schedule();
}

// The browser's EventSource reconnects by itself, sending the last `id` it saw (Last-Event-ID):
// the server goes on after it, and addEvent drops anything it already has.
const source = new EventSource(`${api}/events?token=${encodeURIComponent(token)}`);
source.addEventListener('log', (m) => {
  addEvent(JSON.parse((m as MessageEvent<string>).data) as LogEvent);
  schedule();
});
source.addEventListener('live', (m) => {
  live(JSON.parse((m as MessageEvent<string>).data) as LiveFrame);
  schedule();
});

function live(f: LiveFrame): void {
  switch (f.type) {
    case 'actor':
      recordLive(state.liveHistory, { kind: f.kind, key: f.key, state: f.state, time: f.at });
      return;
    case 'answerable':
      state.answerable = f.calls;
      return;
    case 'session':
      if (f.live) {
        state.live = true;
        return;
      }
      // Nothing more will come: a recorded session, or the run has ended.
      if (state.live === true) {
        state.ended = true;
        state.status = 'the run has ended';
      }
      state.live = false;
      source.close();
      return;
    default:
      // hello, text deltas, stages and turn states: the log and the actor frames show them.
      return;
  }
}

source.addEventListener('error', () => {
  if (source.readyState === EventSource.CLOSED) {
    state.status = 'disconnected';
    schedule();
  }
});
schedule();
