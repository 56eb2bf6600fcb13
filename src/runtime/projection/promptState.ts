/**
 * The prompt projection kept as events arrive (issue 16.1): `apply` folds one log event into the
 * state, `render` builds the prompt from it. A step costs only what changed since the last request:
 * each step's messages are rendered once and kept until an event touches that step (its text, a
 * call, a result, a stub); the messages of ended turns are kept in one flat array, so a request
 * copies that array once and renders only the turns still open.
 *
 * `projectPrompt` (prompt.ts) is this state fed the whole log at once: the same reducer and the
 * same rendering, so a from-scratch projection and an incremental one cannot drift apart.
 *
 * The state is plain data and can be written to a checkpoint (`toJSON`) and read back
 * (`PromptProjection.restore`), so a resumed session does not replay its history. A stubbed
 * result keeps only what its stub shows (size, seq, locator), not its content. Browser-safe.
 */
import type {
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ReasoningPart,
  LanguageModelV3TextPart,
  LanguageModelV3ToolCallPart,
  LanguageModelV3ToolResultPart,
} from '@ai-sdk/provider';
import { ErrorCodeSchema, type ContentPart, type ErrorCode, type LogEvent } from '../../protocol/index.js';
import { ReasoningReplay } from './reasoningReplay.js';
import { defaultArgLimits, readBoundedJson, withinLimits, type ArgLimits } from '../args.js';
import { compactedStub, SUMMARY_PREFIX } from './compactedText.js';
import { promptSize } from './promptSize.js';

type Message = LanguageModelV3Message;

/** How a prompt is rendered from the projection (`projectPrompt`, `PromptProjection.render`). */
export interface ProjectPromptOptions {
  /** Sent first as the system message. */
  system?: string;
  /** Project up to and including this turn (later turns are left out); default: every turn in the log. */
  turnId?: string;
  /**
   * Raw tool-call arguments are parsed for the model only within these limits (default: the
   * runtime's defaults); anything larger, deeper or not JSON is shown as the raw text it was.
   */
  argLimits?: ArgLimits;
}

/** A `tool/call` as the prompt shows it. */
export interface PromptCallView {
  seq: number;
  index: number;
  callId: string;
  toolName: string;
  input: unknown;
}

/** A `tool/result` as the prompt shows it; `content` is dropped once the result is stubbed. */
export interface PromptResultView {
  seq: number;
  callId: string;
  toolName: string;
  isError: boolean;
  /** An error result's code (absent in checkpoints written before it was kept). */
  code?: ErrorCode;
  /** Length of the content (what a stub reports). */
  chars: number;
  /** Absent once stubbed. */
  content?: string;
  parts?: readonly ContentPart[];
  locator?: string;
}

interface StepView {
  index: number;
  /** Steering messages (`user/steer`) that entered before this step's request: user messages before its answer. */
  steers: string[];
  /** Text of the current attempt; a failed attempt's partial text is dropped. */
  text: string;
  reasoning: ReasoningReplay;
  calls: PromptCallView[];
  /** Results by the `seq` of the `tool/call` they answer. */
  results: Map<number, PromptResultView>;
  turn: TurnView;
  /** The step's rendered messages (assistant, tool), until something touches it. */
  cache?: Message[];
}

interface TurnView {
  turnId: string;
  input: string | undefined;
  steps: Map<number, StepView>;
  maxIndex: number;
  ended: boolean;
  /** Position in `order`. */
  pos: number;
  cache?: Message[];
  /** Where its messages sit in `settled` while it is settled. */
  settledStart?: number;
  settledEnd?: number;
}

/** The serialisable state (see `toJSON` / `restore`). */
export interface PromptProjectionState {
  turns: Array<{
    turnId: string;
    input?: string;
    ended: boolean;
    steps: Array<{ index: number; steers?: string[]; text: string; reasoning: ReturnType<ReasoningReplay['toJSON']>; calls: PromptCallView[]; results: Array<[number, PromptResultView]> }>;
  }>;
  stubbed: number[];
  locators: Array<[string, string]>;
  /** Turns folded into the summary (never shown again), and the summary shown in their place. */
  folded?: string[];
  summary?: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNat = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isStr = (v: unknown): v is string => typeof v === 'string';
const optional = (v: unknown, check: (v: unknown) => boolean) => v === undefined || check(v);
const isPart = (p: unknown) =>
  isObj(p) &&
  ((p.type === 'image' || p.type === 'audio') ? isStr(p.data) && isStr(p.mediaType) : p.type === 'resource' && isStr(p.uri) && optional(p.text, isStr) && optional(p.data, isStr) && optional(p.mediaType, isStr));
const isReasoningPart = (p: unknown) => isObj(p) && p.type === 'reasoning' && isStr(p.text) && optional(p.providerOptions, isObj);
const isCall = (c: unknown) => isObj(c) && isNat(c.seq) && isNat(c.index) && isStr(c.callId) && isStr(c.toolName);
const isResult = (r: unknown) =>
  isObj(r) &&
  isNat(r.seq) &&
  isStr(r.callId) &&
  isStr(r.toolName) &&
  typeof r.isError === 'boolean' &&
  optional(r.code, (c) => ErrorCodeSchema.safeParse(c).success) &&
  isNat(r.chars) &&
  optional(r.content, isStr) &&
  optional(r.parts, (ps) => Array.isArray(ps) && ps.every(isPart)) &&
  optional(r.locator, isStr);
const isStep = (s: unknown) =>
  isObj(s) &&
  isNat(s.index) &&
  optional(s.steers, (v) => Array.isArray(v) && v.every(isStr)) &&
  isStr(s.text) &&
  isObj(s.reasoning) &&
  isStr(s.reasoning.open) &&
  Array.isArray(s.reasoning.closed) &&
  s.reasoning.closed.every(isReasoningPart) &&
  Array.isArray(s.calls) &&
  s.calls.every(isCall) &&
  Array.isArray(s.results) &&
  s.results.every((e) => Array.isArray(e) && e.length === 2 && isNat(e[0]) && isResult(e[1]));
const isTurn = (t: unknown) => isObj(t) && isStr(t.turnId) && optional(t.input, isStr) && typeof t.ended === 'boolean' && Array.isArray(t.steps) && t.steps.every(isStep);

/**
 * Whether a checkpoint's value is a state `restore` can take: every field of the shape `toJSON`
 * writes (a plain check, not zod: a long session's state holds tens of thousands of results).
 */
export function isPromptProjectionState(v: unknown): v is PromptProjectionState {
  return (
    isObj(v) &&
    Array.isArray(v.turns) &&
    v.turns.every(isTurn) &&
    Array.isArray(v.stubbed) &&
    v.stubbed.every(isNat) &&
    Array.isArray(v.locators) &&
    v.locators.every((e) => Array.isArray(e) && e.length === 2 && isStr(e[0]) && isStr(e[1])) &&
    optional(v.folded, (f) => Array.isArray(f) && f.every(isStr)) &&
    optional(v.summary, isStr)
  );
}

const locatorKey = (turnId: string, callId: string) => `${turnId}\u0000${callId}`;

/** The model's view of the session, kept as the log grows: turns, steps, results (stubbed or not) and folded turns. */
export class PromptProjection {
  private readonly turns = new Map<string, TurnView>();
  private readonly order: TurnView[] = [];
  /** Turns folded by compaction (their later events are ignored) and the summary standing in for them. */
  private readonly folded = new Set<string>();
  private summary: string | undefined;
  private summaryMessage: Message | undefined;
  private readonly stubbed = new Set<number>();
  private readonly locators = new Map<string, string>();
  /** `seq` of a result → the step and the call seq it is kept under. */
  private readonly resultAt = new Map<number, { step: StepView; callSeq: number }>();

  // Render caches: valid for one set of argument limits.
  private limitsKey = '';
  private limits: ArgLimits = defaultArgLimits;
  private settled: Message[] = [];
  private settledCount = 0;
  private readonly sizes = new WeakMap<Message, number>();

  /** Folds one log event into the state. Never throws for an event the log accepted. */
  apply(event: LogEvent): void {
    if (this.folded.size && 'turnId' in event && event.turnId !== undefined && this.folded.has(event.turnId)) return;
    switch (event.type) {
      case 'turn/start': {
        const turn = this.turnOf(event.turnId);
        turn.input = event.input;
        this.touchTurn(turn);
        break;
      }
      case 'turn/end':
        this.turnOf(event.turnId).ended = true;
        break;
      case 'step/start':
        this.stepOf(event.turnId, event.stepIndex);
        break;
      case 'llm/stream': {
        const step = this.stepOf(event.turnId, event.stepIndex);
        // Reasoning is replayed only with the provider's signature (see reasoningReplay.ts).
        if (event.kind === 'text') step.text += event.text;
        else step.reasoning.add(event);
        this.touchStep(step);
        break;
      }
      case 'agent/request-error': {
        // The response that failed never reached the model's history: its partial text is discarded
        // so the retried request does not carry half an answer. Its tool calls (if streaming
        // dispatch started any) stay, because they ran and have results.
        const step = this.stepOf(event.turnId, event.stepIndex);
        step.text = '';
        step.reasoning.reset();
        this.touchStep(step);
        break;
      }
      case 'tool/call':
        if (event.turnId !== undefined) {
          const step = this.stepOf(event.turnId, event.stepIndex);
          step.calls.push({ seq: event.seq, index: event.index, callId: event.callId, toolName: event.toolName, input: event.input });
          this.touchStep(step);
        }
        break;
      case 'tool/spilled':
        if (event.turnId !== undefined) this.locators.set(locatorKey(event.turnId, event.callId), event.locator);
        break;
      case 'tool/result':
        if (event.turnId !== undefined) {
          const step = this.stepOf(event.turnId, event.stepIndex);
          const callSeq = event.sourceEventSeqs[0]!;
          if (step.results.has(callSeq)) break;
          // Most sessions spill nothing: no key is built for an empty map.
          const locator = this.locators.size ? this.locators.get(locatorKey(event.turnId, event.callId)) : undefined;
          const r = event.result;
          const view: PromptResultView = { seq: event.seq, callId: event.callId, toolName: event.toolName, isError: r.isError, chars: r.content.length };
          if (r.isError) view.code = r.error.code;
          if (!this.stubbed.has(event.seq)) {
            view.content = r.content;
            if (r.parts?.length) view.parts = r.parts;
          }
          if (locator !== undefined) view.locator = locator;
          step.results.set(callSeq, view);
          this.resultAt.set(event.seq, { step, callSeq });
          this.touchStep(step);
        }
        break;
      case 'user/steer': {
        const step = this.stepOf(event.turnId, event.stepIndex);
        step.steers.push(event.text);
        this.touchStep(step);
        break;
      }
      case 'context/compacted':
        if (event.foldedTurnIds) this.fold(event.foldedTurnIds, event.summary);
        for (const seq of event.stubbedSeqs) {
          if (this.stubbed.has(seq)) continue;
          this.stubbed.add(seq);
          const at = this.resultAt.get(seq);
          const view = at?.step.results.get(at.callSeq);
          if (!at || !view) continue;
          // Only what the stub shows is kept.
          delete view.content;
          delete view.parts;
          this.touchStep(at.step, true);
        }
        break;
      default:
        break;
    }
  }

  /** Whether `seq` is a result this projection shows (stubbed or not). */
  hasResult(seq: number): boolean {
    return this.resultAt.has(seq);
  }

  /** Whether `seq` was named by a `context/compacted` event. */
  isStubbed(seq: number): boolean {
    return this.stubbed.has(seq);
  }

  /** The prompt the model is sent; a new array each time (earlier prompts are never changed). */
  render(options: ProjectPromptOptions = {}): LanguageModelV3Prompt {
    this.useLimits(options.argLimits ?? defaultArgLimits);
    this.settle();
    const target = options.turnId === undefined ? undefined : this.turns.get(options.turnId);
    const head: Message[] = options.system !== undefined ? [{ role: 'system', content: options.system }] : [];
    const summary = this.summaryMessageOf();
    if (summary) head.push(summary);
    if (target?.settledEnd !== undefined) {
      return target.settledEnd === this.settled.length ? head.concat(this.settled) : head.concat(this.settled.slice(0, target.settledEnd));
    }
    const out = head.concat(this.settled);
    for (let i = this.settledCount; i < this.order.length; i++) {
      const turn = this.order[i]!;
      for (const m of this.turnMessages(turn)) out.push(m);
      if (turn === target) break;
    }
    return out;
  }

  /** `promptSize` of `render(options)`, each message measured once. */
  size(options: ProjectPromptOptions = {}): number {
    let size = 0;
    for (const m of this.render(options)) size += this.sizeOf(m);
    return size;
  }

  /**
   * The size the prompt would have with these results stubbed as well (without changing anything):
   * only the tool messages of their steps are rendered again.
   */
  sizeIfStubbed(seqs: readonly number[], options: ProjectPromptOptions = {}): number {
    let size = this.size(options);
    const target = options.turnId === undefined ? undefined : this.turns.get(options.turnId);
    const extra = new Set(seqs);
    const steps = new Set<StepView>();
    for (const seq of seqs) {
      const at = this.resultAt.get(seq);
      if (at && !this.stubbed.has(seq) && (!target || at.step.turn.pos <= target.pos)) steps.add(at.step);
    }
    for (const step of steps) {
      const before = this.stepMessages(step).find((m) => m.role === 'tool');
      const after = this.renderStep(step, extra).find((m) => m.role === 'tool');
      size += (after ? this.sizeOf(after) : 0) - (before ? this.sizeOf(before) : 0);
    }
    return size;
  }

  /** The projection as plain data, for a checkpoint. */
  toJSON(): PromptProjectionState {
    return {
      turns: this.order.map((t) => ({
        turnId: t.turnId,
        ...(t.input !== undefined ? { input: t.input } : {}),
        ended: t.ended,
        steps: [...t.steps.values()].map((s) => ({ index: s.index, ...(s.steers.length ? { steers: s.steers } : {}), text: s.text, reasoning: s.reasoning.toJSON(), calls: s.calls, results: [...s.results] })),
      })),
      stubbed: [...this.stubbed],
      locators: [...this.locators],
      ...(this.folded.size ? { folded: [...this.folded] } : {}),
      ...(this.summary !== undefined ? { summary: this.summary } : {}),
    };
  }

  /**
   * The projection a checkpoint recorded (the state is trusted: check it first). Its objects are
   * taken over, not copied: pass a state nothing else holds (as one just parsed).
   */
  static restore(state: PromptProjectionState): PromptProjection {
    const p = new PromptProjection();
    for (const seq of state.stubbed) p.stubbed.add(seq);
    for (const [k, v] of state.locators) p.locators.set(k, v);
    for (const id of state.folded ?? []) p.folded.add(id);
    p.summary = state.summary;
    for (const t of state.turns) {
      const turn = p.turnOf(t.turnId);
      turn.input = t.input;
      turn.ended = t.ended;
      for (const s of t.steps) {
        const step = p.stepOf(t.turnId, s.index);
        step.steers = [...(s.steers ?? [])];
        step.text = s.text;
        step.reasoning = ReasoningReplay.from(s.reasoning);
        step.calls = s.calls;
        for (const [callSeq, r] of s.results) {
          step.results.set(callSeq, r);
          p.resultAt.set(r.seq, { step, callSeq });
        }
      }
    }
    return p;
  }

  /**
   * The finished, unfolded turns in log order with their share of the prompt (what folding each
   * would take out of it), and the turns still open.
   */
  turnShares(options: { argLimits?: ArgLimits } = {}): Array<{ turnId: string; ended: boolean; chars: number }> {
    this.useLimits(options.argLimits ?? defaultArgLimits);
    return this.order.map((t) => ({ turnId: t.turnId, ended: t.ended, chars: this.turnMessages(t).reduce((n, m) => n + this.sizeOf(m), 0) }));
  }

  /** The cumulative summary folded turns are shown as (undefined before the first fold). */
  get foldedSummary(): string | undefined {
    return this.summary;
  }

  /** `size(options)` as it would be with these turns folded into `summary` (nothing changes). */
  sizeIfFolded(turnIds: readonly string[], summary: string, options: ProjectPromptOptions = {}): number {
    let size = this.size(options);
    const current = this.summaryMessageOf();
    if (current) size -= this.sizeOf(current);
    size += promptSize([summaryMessage(summary)]);
    const target = options.turnId === undefined ? undefined : this.turns.get(options.turnId);
    for (const id of new Set(turnIds)) {
      const turn = this.turns.get(id);
      if (turn && (!target || turn.pos <= target.pos)) size -= this.turnMessages(turn).reduce((n, m) => n + this.sizeOf(m), 0);
    }
    return size;
  }

  private summaryMessageOf(): Message | undefined {
    if (this.summary === undefined) return undefined;
    return (this.summaryMessage ??= summaryMessage(this.summary));
  }

  /** Takes whole turns out of the prompt for good; the summary stands in for them. */
  private fold(turnIds: readonly string[], summary: string | undefined): void {
    for (const id of turnIds) {
      this.folded.add(id);
      const turn = this.turns.get(id);
      if (!turn) continue;
      this.turns.delete(id);
      for (const step of turn.steps.values()) for (const r of step.results.values()) this.resultAt.delete(r.seq);
    }
    this.summary = summary;
    this.summaryMessage = undefined;
    const kept = this.order.filter((t) => !this.folded.has(t.turnId));
    this.order.splice(0, this.order.length, ...kept);
    // Positions changed: the settled prefix is rebuilt at the next render (rare: once per fold).
    this.settled = [];
    this.settledCount = 0;
    kept.forEach((t, i) => {
      t.pos = i;
      t.settledStart = t.settledEnd = undefined;
    });
  }

  // --- state -------------------------------------------------------------------------------

  private turnOf(turnId: string): TurnView {
    let turn = this.turns.get(turnId);
    if (!turn) {
      turn = { turnId, input: undefined, steps: new Map(), maxIndex: -1, ended: false, pos: this.order.length };
      this.turns.set(turnId, turn);
      this.order.push(turn);
    }
    return turn;
  }

  private stepOf(turnId: string, stepIndex: number | undefined): StepView {
    const turn = this.turnOf(turnId);
    // An event without a step index belongs to the turn's latest step.
    const index = stepIndex ?? Math.max(turn.maxIndex, 0);
    let step = turn.steps.get(index);
    if (!step) {
      step = { index, steers: [], text: '', reasoning: new ReasoningReplay(), calls: [], results: new Map(), turn };
      turn.steps.set(index, step);
      turn.maxIndex = Math.max(turn.maxIndex, index);
      this.touchTurn(turn);
    }
    return step;
  }

  private touchStep(step: StepView, stubOnly = false): void {
    step.cache = undefined;
    this.touchTurn(step.turn, stubOnly);
  }

  /**
   * Drops the turn's rendered messages. A settled turn is taken out of `settled`, with every turn
   * after it; a stub only changes a message, not how many there are, so that one is replaced in place.
   */
  private touchTurn(turn: TurnView, stubOnly = false): void {
    turn.cache = undefined;
    if (turn.settledStart === undefined) return;
    if (stubOnly) {
      const messages = this.turnMessages(turn);
      if (messages.length === turn.settledEnd! - turn.settledStart) {
        for (let i = 0; i < messages.length; i++) this.settled[turn.settledStart + i] = messages[i]!;
        return;
      }
    }
    this.settled.length = turn.settledStart;
    for (let i = turn.pos; i < this.settledCount; i++) {
      const t = this.order[i]!;
      t.settledStart = t.settledEnd = undefined;
    }
    this.settledCount = turn.pos;
  }

  // --- rendering ---------------------------------------------------------------------------

  private useLimits(limits: ArgLimits): void {
    const key = `${limits.maxArgsChars}/${limits.maxArgsDepth}`;
    if (key === this.limitsKey) return;
    this.limitsKey = key;
    this.limits = limits;
    this.settled = [];
    this.settledCount = 0;
    for (const t of this.order) {
      t.cache = undefined;
      t.settledStart = t.settledEnd = undefined;
      for (const s of t.steps.values()) s.cache = undefined;
    }
  }

  /** Moves ended turns at the front of the open ones into `settled`. */
  private settle(): void {
    while (this.settledCount < this.order.length) {
      const turn = this.order[this.settledCount]!;
      if (!turn.ended) break;
      turn.settledStart = this.settled.length;
      for (const m of this.turnMessages(turn)) this.settled.push(m);
      turn.settledEnd = this.settled.length;
      this.settledCount++;
    }
  }

  private turnMessages(turn: TurnView): Message[] {
    if (turn.cache) return turn.cache;
    const out: Message[] = [];
    if (turn.input !== undefined) out.push({ role: 'user', content: [{ type: 'text', text: turn.input }] });
    const indexes = [...turn.steps.keys()].sort((a, b) => a - b);
    for (const index of indexes) for (const m of this.stepMessages(turn.steps.get(index)!)) out.push(m);
    turn.cache = out;
    return out;
  }

  private stepMessages(step: StepView): Message[] {
    return (step.cache ??= this.renderStep(step));
  }

  private renderStep(step: StepView, extraStubs?: ReadonlySet<number>): Message[] {
    const out: Message[] = [];
    for (const text of step.steers) out.push({ role: 'user', content: [{ type: 'text', text }] });
    // Model order, not completion order: the pairs the model sees are deterministic.
    const calls = [...step.calls].sort((a, b) => a.index - b.index || a.seq - b.seq);
    const assistant: (LanguageModelV3ReasoningPart | LanguageModelV3TextPart | LanguageModelV3ToolCallPart)[] = [...step.reasoning.parts()];
    if (step.text) assistant.push({ type: 'text', text: step.text });
    for (const call of calls) assistant.push({ type: 'tool-call', toolCallId: call.callId, toolName: call.toolName, input: parseInput(call.input, this.limits) });
    if (assistant.length) out.push({ role: 'assistant', content: assistant });

    const results: LanguageModelV3ToolResultPart[] = [];
    for (const call of calls) {
      const r = step.results.get(call.seq);
      if (!r) continue; // a call still running: it has no result to show yet
      const stub = r.content === undefined || this.stubbed.has(r.seq) || extraStubs?.has(r.seq) === true;
      const content = stub ? compactedStub({ chars: r.chars, seq: r.seq, ...(r.locator !== undefined ? { locator: r.locator } : {}) }) : r.content!;
      results.push({
        type: 'tool-result',
        toolCallId: call.callId,
        toolName: call.toolName,
        output: r.isError
          ? { type: 'error-text', value: content }
          : r.parts?.length && !stub
            ? { type: 'content', value: [{ type: 'text', text: content }, ...r.parts.map(partOutput)] }
            : { type: 'text', value: content },
      });
    }
    if (results.length) out.push({ role: 'tool', content: results });
    return out;
  }

  private sizeOf(m: Message): number {
    let size = this.sizes.get(m);
    if (size === undefined) {
      size = promptSize([m]);
      this.sizes.set(m, size);
    }
    return size;
  }
}

/** The message folded turns are shown as: one user message carrying the summary. */
function summaryMessage(summary: string): Message {
  return { role: 'user', content: [{ type: 'text', text: `${SUMMARY_PREFIX}${summary}` }] };
}

/**
 * The arguments as the model sent them: parsed when the raw text is JSON within the argument
 * limits, else the raw string (a call rejected as too deep or too large reaches the model as text,
 * and no later reader can overflow on it).
 */
function parseInput(input: unknown, limits: ArgLimits): unknown {
  if (typeof input !== 'string') return withinLimits(input, limits) ? input : '[arguments too large or too deep to show]';
  const read = readBoundedJson(input, limits);
  return read.ok ? read.value : input;
}

type ContentOutputPart = Extract<LanguageModelV3ToolResultPart['output'], { type: 'content' }>['value'][number];

/**
 * A typed part as the model receives it: images and binary data as media; text resources and
 * links as text (a link is never handed to the provider to fetch: its URI came from a tool).
 */
function partOutput(part: ContentPart): ContentOutputPart {
  switch (part.type) {
    case 'image':
      return { type: 'image-data', data: part.data, mediaType: part.mediaType };
    case 'audio':
      return { type: 'file-data', data: part.data, mediaType: part.mediaType };
    case 'resource':
      if (part.data !== undefined) return { type: 'file-data', data: part.data, mediaType: part.mediaType ?? 'application/octet-stream' };
      return { type: 'text', text: part.text !== undefined ? `resource ${part.uri}:\n${part.text}` : `resource link: ${part.uri}` };
  }
}
