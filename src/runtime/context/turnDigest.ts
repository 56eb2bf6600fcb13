/**
 * What a folded turn was, in a few words: the deterministic digest used when whole old turns
 * leave the prompt and no model is there to summarise them (or the model failed to). Pure and
 * bounded: every field is clipped, so a digest never grows with what a turn contained.
 */
import type { LogEvent } from '../../protocol/index.js';
import type { PromptProjectionState } from '../projection/promptState.js';

/** One finished turn, as the summariser sees it. */
export interface FoldedTurn {
  readonly turnId: string;
  /** The user's request (clipped). */
  readonly input: string;
  /** Tool calls by name, in first-use order, with how many ended in an error. */
  readonly tools: readonly { readonly name: string; readonly calls: number; readonly errors: number }[];
  /** The model's final text (clipped). */
  readonly answer: string;
  readonly outcome: string;
}

const INPUT_CHARS = 240;
const ANSWER_CHARS = 240;
const TOOL_NAMES = 8;

/** Collapses whitespace and clips to `max` chars, marking the cut. */
export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`;
}

/** Reads the given turns (ids in log order) from the log's events. */
export function readFoldedTurns(events: readonly LogEvent[], turnIds: readonly string[]): FoldedTurn[] {
  const wanted = new Set(turnIds);
  interface Draft {
    input: string;
    tools: Map<string, { calls: number; errors: number }>;
    texts: Map<number, string>;
    lastStep: number;
    outcome: string;
  }
  const drafts = new Map<string, Draft>();
  for (const e of events) {
    if (!('turnId' in e) || e.turnId === undefined || !wanted.has(e.turnId)) continue;
    let d = drafts.get(e.turnId);
    if (!d) {
      d = { input: '', tools: new Map(), texts: new Map(), lastStep: -1, outcome: 'unfinished' };
      drafts.set(e.turnId, d);
    }
    switch (e.type) {
      case 'turn/start':
        d.input = e.input;
        break;
      case 'step/start':
        d.lastStep = Math.max(d.lastStep, e.stepIndex);
        d.texts.set(e.stepIndex, '');
        break;
      case 'llm/stream':
        // Only the clipped prefix is ever shown: stop accumulating past it.
        if (e.kind === 'text' && (d.texts.get(e.stepIndex) ?? '').length <= ANSWER_CHARS * 4) d.texts.set(e.stepIndex, (d.texts.get(e.stepIndex) ?? '') + e.text);
        break;
      case 'agent/request-error':
        d.texts.set(e.stepIndex, '');
        break;
      case 'tool/call': {
        const t = d.tools.get(e.toolName) ?? { calls: 0, errors: 0 };
        t.calls += 1;
        d.tools.set(e.toolName, t);
        break;
      }
      case 'tool/result':
        if (e.result.isError) {
          const t = d.tools.get(e.toolName) ?? { calls: 0, errors: 0 };
          t.errors += 1;
          d.tools.set(e.toolName, t);
        }
        break;
      case 'turn/end':
        d.outcome = e.outcome;
        break;
      default:
        break;
    }
  }
  return turnIds.map((turnId) => {
    const d = drafts.get(turnId);
    return {
      turnId,
      input: clip(d?.input ?? '', INPUT_CHARS),
      tools: [...(d?.tools ?? new Map<string, { calls: number; errors: number }>()).entries()].map(([name, t]) => ({ name: clip(name, 64), ...t })),
      answer: clip(d?.texts.get(d.lastStep) ?? '', ANSWER_CHARS),
      outcome: d?.outcome ?? 'unfinished',
    };
  });
}

/**
 * A turn's digest from what the prompt projection keeps of it (`PromptProjection.toJSON()`), for a
 * turn whose events the log no longer holds (it was resumed from a later checkpoint): the same
 * fields `readFoldedTurns` reads from the events. `outcome`: how it ended (when it did).
 */
export function foldedTurnOfState(turnId: string, turn: PromptProjectionState['turns'][number] | undefined, outcome: string): FoldedTurn {
  const tools = new Map<string, { calls: number; errors: number }>();
  let last: PromptProjectionState['turns'][number]['steps'][number] | undefined;
  for (const step of turn?.steps ?? []) {
    if (!last || step.index >= last.index) last = step;
    for (const c of step.calls) {
      const t = tools.get(c.toolName) ?? { calls: 0, errors: 0 };
      t.calls += 1;
      tools.set(c.toolName, t);
    }
    for (const [, r] of step.results) {
      if (!r.isError) continue;
      const t = tools.get(r.toolName) ?? { calls: 0, errors: 0 };
      t.errors += 1;
      tools.set(r.toolName, t);
    }
  }
  return {
    turnId,
    input: clip(turn?.input ?? '', INPUT_CHARS),
    tools: [...tools.entries()].map(([name, t]) => ({ name: clip(name, 64), ...t })),
    answer: clip(last?.text ?? '', ANSWER_CHARS),
    outcome: turn?.ended ? outcome : 'unfinished',
  };
}

/** One line per turn: what was asked, which tools ran, what was answered. */
export function digestLine(turn: FoldedTurn): string {
  const shown = turn.tools.slice(0, TOOL_NAMES).map((t) => `${t.name}×${t.calls}${t.errors ? ` (${t.errors} failed)` : ''}`);
  if (turn.tools.length > TOOL_NAMES) shown.push(`${turn.tools.length - TOOL_NAMES} more tools`);
  const tools = shown.length ? ` Tools: ${shown.join(', ')}.` : '';
  const outcome = turn.outcome === 'completed' ? '' : ` (${turn.outcome})`;
  return `- ${turn.turnId}: asked "${turn.input}".${tools} Answered${outcome}: "${turn.answer}"`;
}

const HEADER = 'Earlier turns (a deterministic digest; full details stay in the session log):';

/**
 * The deterministic summary: the previous summary's lines, then one line per newly folded turn,
 * newest kept. When it would exceed `maxChars`, the oldest lines give way to a count of them.
 */
export function digestSummary(previous: string | undefined, turns: readonly FoldedTurn[], maxChars: number): string {
  let omitted = 0;
  const lines: string[] = [];
  // A summary the model wrote (not a digest) is kept, clipped, as the oldest line.
  if (previous !== undefined && !previous.startsWith(HEADER) && previous.trim()) lines.push(`- earlier summary: ${clip(previous, 2_000)}`);
  else for (const line of (previous ?? '').split('\n')) {
    const counted = /^\(\s*(\d+) earlier turns? omitted\)$/.exec(line);
    if (counted) omitted += Number(counted[1]);
    else if (line.startsWith('- ')) lines.push(line);
  }
  lines.push(...turns.map(digestLine));
  const render = () => [HEADER, ...(omitted ? [`(${omitted} earlier turn${omitted === 1 ? '' : 's'} omitted)`] : []), ...lines].join('\n');
  let text = render();
  while (text.length > maxChars && lines.length > 0) {
    lines.shift();
    omitted += 1;
    text = render();
  }
  return text.length > maxChars ? text.slice(0, Math.max(0, maxChars)) : text;
}
