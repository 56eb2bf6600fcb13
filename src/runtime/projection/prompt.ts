/**
 * The model's view of a session: a pure function from the log to the `LanguageModelV3` prompt.
 * Every request's prompt is derived from the log, so compaction, replay and resume all see the
 * same messages; the runtime keeps the projection as events arrive (promptState.ts) rather than
 * re-deriving it from the whole log per request.
 */
import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import type { LogEvent } from '../../protocol/index.js';
import type { ArgLimits } from '../args.js';
import { PromptProjection } from './promptState.js';

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

/** Opens the message that stands in for folded turns. */
export const SUMMARY_PREFIX = '[Summary of the earlier conversation; those turns were compacted]\n';

/** Where the full text of a compacted result can be found again. */
export interface CompactedStubInfo {
  /** Length (chars) of the content the stub replaces. */
  chars: number;
  /** `seq` of the `tool/result` event holding that content. */
  seq: number;
  /** Spill locator when the result was spilled (the log then holds only its preview). */
  locator?: string;
}

/** The short text a compacted tool result is shown as. */
export function compactedStub(info: CompactedStubInfo): string {
  const size = `${groupThousands(info.chars)} chars`;
  return info.locator === undefined
    ? `[result compacted: ${size}; full text in session log seq ${info.seq}]`
    : `[result compacted: ${size}; preview in session log seq ${info.seq}, full text at spill locator ${info.locator}]`;
}

// Locale-independent so the prompt (and its size) is identical in every runtime.
function groupThousands(n: number): string {
  return String(Math.trunc(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Builds the prompt the model is sent, from the session log alone (see promptState.ts). */
export function projectPrompt(events: readonly LogEvent[], options: ProjectPromptOptions = {}): LanguageModelV3Prompt {
  const projection = new PromptProjection();
  for (const event of events) projection.apply(event);
  return projection.render(options);
}

/** Size of a prompt in characters of content (text, arguments, results), the measure compaction must reduce. */
export function promptSize(prompt: LanguageModelV3Prompt): number {
  let size = 0;
  for (const message of prompt) {
    if (message.role === 'system') {
      size += message.content.length;
      continue;
    }
    for (const part of message.content) {
      switch (part.type) {
        case 'text':
        case 'reasoning':
          size += part.text.length;
          break;
        case 'tool-call':
          size += part.toolName.length + (typeof part.input === 'string' ? part.input.length : jsonLength(part.input));
          break;
        case 'tool-result': {
          const out = part.output;
          if (out.type === 'text' || out.type === 'error-text') size += out.value.length;
          else if (out.type === 'json' || out.type === 'error-json') size += jsonLength(out.value);
          else if (out.type === 'execution-denied') size += out.reason?.length ?? 0;
          else size += jsonLength(out.value);
          break;
        }
        case 'file':
          size += typeof part.data === 'string' ? part.data.length : part.data instanceof URL ? part.data.href.length : part.data.byteLength;
          break;
        default:
          break;
      }
    }
  }
  return size;
}

/** Length of a value's JSON; a value JSON cannot carry (cyclic, too deep) counts as its text form. */
function jsonLength(value: unknown): number {
  try {
    return (JSON.stringify(value) ?? '').length;
  } catch {
    return String(value).length;
  }
}
