/**
 * The oracle of the incremental projection: `projectPrompt` as it was before issue 16.1 (one pass
 * over the whole log per request, nothing kept), copied unchanged. The property test checks that
 * the projection kept as events arrive (src/runtime/projection/promptState.ts) renders exactly this.
 */
import type {
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ReasoningPart,
  LanguageModelV3TextPart,
  LanguageModelV3ToolCallPart,
  LanguageModelV3ToolResultPart,
} from '@ai-sdk/provider';
import type { ContentPart, LogEvent, LogEventOf } from '../../src/protocol/index.js';
import { ReasoningReplay } from '../../src/runtime/projection/reasoningReplay.js';
import { defaultArgLimits, readBoundedJson, withinLimits, type ArgLimits } from '../../src/runtime/args.js';
import { compactedStub } from '../../src/runtime/projection/compactedText.js';
import type { ProjectPromptOptions } from '../../src/runtime/projection/promptState.js';

interface StepView {
  /** Text of the current attempt; a failed attempt's partial text is dropped (see below). */
  text: string;
  /** Signed reasoning blocks of the current attempt, replayed before the text. */
  reasoning: ReasoningReplay;
  calls: LogEventOf<'tool/call'>[];
  /** Results by the `seq` of the `tool/call` they answer. */
  results: Map<number, { event: LogEventOf<'tool/result'>; locator: string | undefined }>;
}

interface TurnView {
  turnId: string;
  input: string | undefined;
  steps: Map<number, StepView>;
}

/** Builds the prompt the model is sent, from the session log alone. */
export function projectPromptFromScratch(events: readonly LogEvent[], options: ProjectPromptOptions = {}): LanguageModelV3Prompt {
  const turns = new Map<string, TurnView>();
  const stubbed = new Set<number>();
  // Spill locators by turn + callId, as recorded by `tool/spilled` before the result is committed.
  const locators = new Map<string, string>();

  const turnOf = (turnId: string): TurnView => {
    let turn = turns.get(turnId);
    if (!turn) {
      turn = { turnId, input: undefined, steps: new Map() };
      turns.set(turnId, turn);
    }
    return turn;
  };
  const stepOf = (turnId: string, stepIndex: number | undefined): StepView => {
    const turn = turnOf(turnId);
    // An event without a step index belongs to the turn's latest step.
    const index = stepIndex ?? (turn.steps.size ? Math.max(...turn.steps.keys()) : 0);
    let step = turn.steps.get(index);
    if (!step) {
      step = { text: '', reasoning: new ReasoningReplay(), calls: [], results: new Map() };
      turn.steps.set(index, step);
    }
    return step;
  };

  for (const event of events) {
    switch (event.type) {
      case 'turn/start':
        turnOf(event.turnId).input = event.input;
        break;
      case 'step/start':
        stepOf(event.turnId, event.stepIndex);
        break;
      case 'llm/stream':
        // Reasoning is replayed only with the provider's signature (see reasoningReplay.ts).
        if (event.kind === 'text') stepOf(event.turnId, event.stepIndex).text += event.text;
        else stepOf(event.turnId, event.stepIndex).reasoning.add(event);
        break;
      case 'agent/request-error':
        // The response that failed never reached the model's history: its partial text is discarded
        // so the retried request does not carry half an answer. Its tool calls (if streaming
        // dispatch started any) stay, because they ran and have results.
        stepOf(event.turnId, event.stepIndex).text = '';
        stepOf(event.turnId, event.stepIndex).reasoning.reset();
        break;
      case 'tool/call':
        if (event.turnId !== undefined) stepOf(event.turnId, event.stepIndex).calls.push(event);
        break;
      case 'tool/spilled':
        if (event.turnId !== undefined) locators.set(`${event.turnId}\u0000${event.callId}`, event.locator);
        break;
      case 'tool/result':
        if (event.turnId !== undefined) {
          const step = stepOf(event.turnId, event.stepIndex);
          const callSeq = event.sourceEventSeqs[0]!;
          if (!step.results.has(callSeq)) step.results.set(callSeq, { event, locator: locators.get(`${event.turnId}\u0000${event.callId}`) });
        }
        break;
      case 'context/compacted':
        for (const seq of event.stubbedSeqs) stubbed.add(seq);
        break;
      default:
        break;
    }
  }

  const limits = options.argLimits ?? defaultArgLimits;
  const prompt: LanguageModelV3Message[] = [];
  if (options.system !== undefined) prompt.push({ role: 'system', content: options.system });
  for (const turn of turns.values()) {
    if (turn.input !== undefined) prompt.push({ role: 'user', content: [{ type: 'text', text: turn.input }] });
    for (const index of [...turn.steps.keys()].sort((a, b) => a - b)) {
      const step = turn.steps.get(index)!;
      // Model order, not completion order: the pairs the model sees are deterministic.
      const calls = [...step.calls].sort((a, b) => a.index - b.index || a.seq - b.seq);
      const assistant: (LanguageModelV3ReasoningPart | LanguageModelV3TextPart | LanguageModelV3ToolCallPart)[] = [...step.reasoning.parts()];
      if (step.text) assistant.push({ type: 'text', text: step.text });
      for (const call of calls) assistant.push({ type: 'tool-call', toolCallId: call.callId, toolName: call.toolName, input: parseInput(call.input, limits) });
      if (assistant.length) prompt.push({ role: 'assistant', content: assistant });

      const results: LanguageModelV3ToolResultPart[] = [];
      for (const call of calls) {
        const found = step.results.get(call.seq);
        if (!found) continue; // a call still running: it has no result to show yet
        const { event, locator } = found;
        const content = stubbed.has(event.seq)
          ? compactedStub({ chars: event.result.content.length, seq: event.seq, ...(locator !== undefined ? { locator } : {}) })
          : event.result.content;
        results.push({
          type: 'tool-result',
          toolCallId: call.callId,
          toolName: call.toolName,
          output: event.result.isError
            ? { type: 'error-text', value: content }
            : event.result.parts?.length && !stubbed.has(event.seq)
              ? { type: 'content', value: [{ type: 'text', text: content }, ...event.result.parts.map(partOutput)] }
              : { type: 'text', value: content },
        });
      }
      if (results.length) prompt.push({ role: 'tool', content: results });
    }
    if (options.turnId !== undefined && turn.turnId === options.turnId) break;
  }
  return prompt;
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

