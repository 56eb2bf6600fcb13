/** How big a prompt is, counted the way compaction and context fitting count it. */
import type { LanguageModelV3Prompt } from '@ai-sdk/provider';

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
