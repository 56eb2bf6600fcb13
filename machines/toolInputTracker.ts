/**
 * Decides when a streamed tool call is ready to dispatch: at its `tool-input-end`, at its
 * `tool-call` part, or as soon as its streamed input is a closed JSON object, whichever comes
 * first. (OpenAI Chat emits `tool-input-end` and `tool-call` only when the whole stream closes;
 * Anthropic at each block's end.) Each call is reported exactly once, and in the order the calls
 * started, so the model's array order survives interleaved argument streams.
 */
import { JsonObjectEnd } from './jsonObjectEnd.js';

/** A tool call whose input has streamed in full (its JSON object closed). */
export interface ReadyToolCall {
  callId: string;
  toolName: string;
  input: string;
}

interface TrackedCall {
  readonly id: string;
  toolName: string;
  text: string;
  readonly end: JsonObjectEnd;
  /** The input the call is dispatched with, once known. */
  ready: string | undefined;
}

export class ToolInputTracker {
  private readonly byId = new Map<string, TrackedCall>();
  /** Calls not yet reported, in the order they started. */
  private readonly pending: TrackedCall[] = [];
  private readonly reported = new Set<string>();

  constructor(private readonly report: (call: ReadyToolCall) => void) {}

  start(id: string, toolName: string): void {
    if (this.reported.has(id) || this.byId.has(id)) return;
    this.track(id, toolName);
  }

  delta(id: string, delta: string): void {
    const call = this.byId.get(id);
    if (!call || call.ready !== undefined) return;
    call.text += delta;
    if (call.end.feed(delta) && parses(call.text)) this.markReady(call, call.text);
  }

  /** The provider says the input is complete. An empty input waits for the `tool-call` part (providers fill in `{}`). */
  end(id: string): void {
    const call = this.byId.get(id);
    if (!call || call.ready !== undefined || call.text.trim() === '') return;
    this.markReady(call, call.text);
  }

  call(id: string, toolName: string, input: string): void {
    if (this.reported.has(id)) return;
    const call = this.byId.get(id) ?? this.track(id, toolName);
    if (call.ready !== undefined) return;
    call.toolName = toolName;
    this.markReady(call, input);
  }

  /** The response finished: report every ready call still held behind one that never completed. */
  flush(): void {
    for (const call of this.pending.splice(0)) {
      this.byId.delete(call.id);
      if (call.ready === undefined) continue;
      this.reported.add(call.id);
      this.report({ callId: call.id, toolName: call.toolName, input: call.ready });
    }
  }

  private track(id: string, toolName: string): TrackedCall {
    const call: TrackedCall = { id, toolName, text: '', end: new JsonObjectEnd(), ready: undefined };
    this.byId.set(id, call);
    this.pending.push(call);
    return call;
  }

  private markReady(call: TrackedCall, input: string): void {
    call.ready = input;
    while (this.pending.length && this.pending[0]!.ready !== undefined) {
      const next = this.pending.shift()!;
      this.byId.delete(next.id);
      this.reported.add(next.id);
      this.report({ callId: next.id, toolName: next.toolName, input: next.ready! });
    }
  }
}

/** Called once `JsonObjectEnd` saw a top-level object close: the text is that object if it parses. */
function parses(text: string): boolean {
  try {
    JSON.parse(text);
  } catch {
    return false;
  }
  return true;
}
