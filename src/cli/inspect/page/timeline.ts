/**
 * The log as a readable timeline: one row per event (seq, event type, call, code, a short text),
 * virtualised (only the rows in view are in the DOM), so a session of thousands of events stays
 * responsive. A click on a row selects the actor the event belongs to.
 */
import type { LogRow } from './model.js';

export const ROW_HEIGHT = 22;

export interface LogList {
  readonly element: HTMLElement;
  /** Redraws with these rows; `at` is the scrubbed position (later rows are dimmed). */
  update(rows: readonly LogRow[], at: number, selectedActor: string | undefined): void;
  /** Scrolls so the row of `seq` is in view. */
  reveal(seq: number): void;
}

export function createLogList(onSelect: (row: LogRow) => void): LogList {
  const element = document.createElement('div');
  element.className = 'log-scroll';
  element.dataset.testid = 'log';
  const spacer = document.createElement('div');
  spacer.className = 'log-spacer';
  element.append(spacer);
  let rows: readonly LogRow[] = [];
  let at = 0;
  let selected: string | undefined;
  let drawn = '';

  const draw = () => {
    const first = Math.max(0, Math.floor(element.scrollTop / ROW_HEIGHT) - 10);
    const count = Math.ceil((element.clientHeight || 400) / ROW_HEIGHT) + 20;
    const last = Math.min(rows.length, first + count);
    const key = `${first}:${last}:${rows.length}:${at}:${selected}`;
    if (key === drawn) return;
    drawn = key;
    spacer.style.height = `${rows.length * ROW_HEIGHT}px`;
    const frag = document.createDocumentFragment();
    for (let i = first; i < last; i++) frag.append(rowElement(rows[i]!, i));
    spacer.replaceChildren(frag);
  };

  const rowElement = (r: LogRow, i: number) => {
    const el = document.createElement('div');
    el.className = 'log-row';
    if (r.seq > at) el.classList.add('future');
    if (r.seq === at) el.classList.add('at');
    if (r.actor && selected === `${r.actor.kind}:${r.actor.key}`) el.classList.add('selected');
    if (r.code && /^[A-Z_]+$/.test(r.code)) el.classList.add('error');
    el.style.top = `${i * ROW_HEIGHT}px`;
    el.dataset.testid = 'log-row';
    el.dataset.seq = String(r.seq);
    if (r.callId) el.dataset.callId = r.callId;
    const cell = (cls: string, text: string) => {
      const c = document.createElement('span');
      c.className = cls;
      c.textContent = text;
      return c;
    };
    el.append(cell('seq', String(r.seq)), cell('type', r.type), cell('call', r.callId ?? (r.actor?.kind === 'step' ? `step ${r.actor.key}` : (r.actor?.key ?? ''))), cell('code', r.code ?? ''), cell('text', r.text));
    el.title = `seq ${r.seq} · ${new Date(r.time).toISOString()}`;
    el.addEventListener('click', () => onSelect(r));
    return el;
  };

  let scheduled = false;
  element.addEventListener('scroll', () => {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => {
      scheduled = false;
      draw();
    });
  });

  return {
    element,
    update(next, nextAt, nextSelected) {
      rows = next;
      at = nextAt;
      selected = nextSelected;
      draw();
    },
    reveal(seq) {
      const i = rows.findIndex((r) => r.seq === seq);
      if (i < 0) return;
      const top = i * ROW_HEIGHT;
      const h = element.clientHeight || 400;
      if (top < element.scrollTop || top + ROW_HEIGHT > element.scrollTop + h) element.scrollTop = Math.max(0, top - h / 2);
      draw();
    },
  };
}
