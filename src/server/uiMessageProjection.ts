/**
 * A turn of a dsh session as the AI SDK's UI message stream (the protocol `useChat` from
 * `@ai-sdk/react` reads): one assistant message per turn (its id is the turn's id), a step per
 * model request, its text and reasoning, and each call as a tool part: its input, the approval it
 * asks for (`approvalId` is the `seq` of the call's `tool/approval-request`, the same id the wire
 * protocol answers), a denial, its output or error. A pure projection of the log: the same events
 * give the same chunks. Browser-safe.
 */
import type { LogEvent } from '../protocol/index.js';

/** The UI message stream chunks this projection writes (a subset of the AI SDK's `UIMessageChunk`). */
export type UiChunk =
  | { type: 'start'; messageId: string }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | { type: 'text-start' | 'text-end' | 'reasoning-start' | 'reasoning-end'; id: string }
  | { type: 'text-delta' | 'reasoning-delta'; id: string; delta: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string }
  | { type: 'tool-output-denied'; toolCallId: string }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string }
  | { type: 'finish'; messageMetadata: { lastSeq: number } }
  | { type: 'error'; errorText: string };

/** What a chat message part must know to continue a turn: the `seq` its stream ended at. */
export interface TurnMessageMetadata {
  readonly lastSeq: number;
}

const parsedInput = (input: unknown): unknown => {
  if (typeof input !== 'string') return input;
  try {
    return JSON.parse(input);
  } catch {
    return input;
  }
};

export interface UiMessageProjection {
  /** The chunks of one log event of the turn (none for another turn's events). */
  chunks(e: LogEvent): UiChunk[];
  /** The calls whose question was asked and not yet answered (their `tool/approval-request`'s `seq`). */
  readonly openApprovals: ReadonlyMap<string, number>;
}

/** The projection of turn `turnId`, from wherever the stream starts. */
export function uiMessageProjection(turnId: string): UiMessageProjection {
  /** The open text and reasoning parts (their ids), closed at a call or the step's end. */
  let text: string | undefined;
  let reasoning: string | undefined;
  const denied = new Set<string>();
  const openApprovals = new Map<string, number>();

  const close = (): UiChunk[] => {
    const out: UiChunk[] = [];
    if (text !== undefined) out.push({ type: 'text-end', id: text });
    if (reasoning !== undefined) out.push({ type: 'reasoning-end', id: reasoning });
    text = reasoning = undefined;
    return out;
  };

  return {
    openApprovals,
    chunks(e) {
      if (!('turnId' in e) || e.turnId !== turnId) return [];
      switch (e.type) {
        case 'step/start':
          return [{ type: 'start-step' }];
        case 'llm/stream': {
          const out: UiChunk[] = [];
          if (e.kind === 'text') {
            if (text === undefined) out.push({ type: 'text-start', id: (text = `${turnId}-${e.stepIndex}-text-${e.seq}`) });
            out.push({ type: 'text-delta', id: text, delta: e.text });
          } else {
            if (reasoning === undefined) out.push({ type: 'reasoning-start', id: (reasoning = `${turnId}-${e.stepIndex}-reasoning-${e.seq}`) });
            out.push({ type: 'reasoning-delta', id: reasoning, delta: e.text });
          }
          return out;
        }
        case 'tool/call':
          return [...close(), { type: 'tool-input-available', toolCallId: e.callId, toolName: e.toolName, input: parsedInput(e.input) }];
        case 'tool/approval-request':
          openApprovals.set(e.callId, e.seq);
          return [{ type: 'tool-approval-request', approvalId: String(e.seq), toolCallId: e.callId }];
        case 'tool/approval-answer':
          openApprovals.delete(e.callId);
          if (e.answer === 'denied' || e.answer === 'timeout' || e.answer === 'cancelled') {
            denied.add(e.callId);
            return [{ type: 'tool-output-denied', toolCallId: e.callId }];
          }
          return [];
        case 'tool/result':
          openApprovals.delete(e.callId);
          if (denied.has(e.callId)) return [];
          return [e.result.isError ? { type: 'tool-output-error', toolCallId: e.callId, errorText: e.result.content } : { type: 'tool-output-available', toolCallId: e.callId, output: e.result.content }];
        case 'step/end':
          return [...close(), { type: 'finish-step' }];
        case 'turn/end':
        case 'turn/suspended':
          return close();
        default:
          return [];
      }
    },
  };
}
