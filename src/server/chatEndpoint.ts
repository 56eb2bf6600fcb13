/**
 * `POST {base}/sessions/:id/chat`: the session for `useChat` (`@ai-sdk/react`) and any client of the
 * AI SDK's UI message stream protocol. A request whose last message is the user's starts a turn
 * with its text (once per message id: a retried request starts nothing more) and streams that turn
 * as one assistant message (its id is the turn's id). A request whose last message is that
 * assistant message continues it: each of its tool parts answered in the page
 * (`addToolApprovalResponse`) is answered through the same exactly-once path as
 * `POST …/approvals/:approvalId` (a part another client answered first is skipped: the log says
 * who won), then the turn streams on from where the previous response ended. A response ends when
 * the turn ends or suspends, or when it waits on a question this server can answer (the page shows
 * it and answers it with its next request). Browser-safe.
 */
import * as z from 'zod';
import type { LogEvent } from '../protocol/index.js';
import { SlowClientError } from './eventStream.js';
import type { DurableFeed } from './durableFeed.js';
import { CommandRefused, type HostedSession } from './hostedSession.js';
import { uiMessageProjection, type UiChunk } from './uiMessageProjection.js';

const PartSchema = z.looseObject({ type: z.string() });
/** What the endpoint reads of `useChat`'s request (the rest of each message is the client's). */
export const ChatRequestSchema = z.looseObject({
  messages: z
    .array(
      z.looseObject({
        id: z.string().max(200),
        role: z.enum(['user', 'assistant', 'system']),
        parts: z.array(PartSchema).max(10_000),
        metadata: z.unknown().optional(),
      }),
    )
    .min(1)
    .max(10_000),
});
export type ChatRequest = z.infer<typeof ChatRequestSchema>;

const TextPart = z.object({ type: z.literal('text'), text: z.string() });
const RespondedPart = z.object({
  type: z.string().startsWith('tool-'),
  state: z.literal('approval-responded'),
  approval: z.object({ id: z.string().regex(/^[1-9][0-9]{0,14}$/), approved: z.boolean(), reason: z.string().max(4_000).optional() }),
});
const Metadata = z.object({ lastSeq: z.number().int().nonnegative() });

/** What the request asks for: a new turn, or the continuation of one. */
export type ChatIntent =
  | { readonly kind: 'start'; readonly messageId: string; readonly input: string }
  | { readonly kind: 'continue'; readonly turnId: string; readonly after: number; readonly answers: ReadonlyArray<{ seq: number; approved: boolean; reason?: string }> };

export function chatIntentOf(request: ChatRequest): ChatIntent | { readonly kind: 'invalid'; readonly message: string } {
  const last = request.messages[request.messages.length - 1]!;
  if (last.role === 'user') {
    const input = last.parts
      .flatMap((p) => {
        const t = TextPart.safeParse(p);
        return t.success ? [t.data.text] : [];
      })
      .join('');
    if (!input.trim()) return { kind: 'invalid', message: 'the last user message has no text' };
    return { kind: 'start', messageId: last.id, input };
  }
  if (last.role === 'assistant') {
    const answers = last.parts.flatMap((p) => {
      const r = RespondedPart.safeParse(p);
      return r.success ? [{ seq: Number(r.data.approval.id), approved: r.data.approval.approved, ...(r.data.approval.reason !== undefined ? { reason: r.data.approval.reason } : {}) }] : [];
    });
    const meta = Metadata.safeParse(last.metadata);
    return { kind: 'continue', turnId: last.id, after: meta.success ? meta.data.lastSeq : 0, answers };
  }
  return { kind: 'invalid', message: 'the last message is neither the user\'s nor the assistant\'s' };
}

/** Answers the approvals the page responded to; one another client answered first is left as the log says. */
export async function applyAnswers(session: HostedSession, answers: Extract<ChatIntent, { kind: 'continue' }>['answers']): Promise<void> {
  for (const a of answers) {
    try {
      await session.answer(a.seq, a.approved ? { answer: 'allow-once' } : { answer: 'deny', ...(a.reason !== undefined && a.reason.trim() !== '' ? { reason: a.reason } : {}) });
    } catch (e) {
      if (!(e instanceof CommandRefused)) throw e;
    }
  }
}

const encoder = new TextEncoder();
const frame = (chunk: UiChunk | '[DONE]') => encoder.encode(`data: ${typeof chunk === 'string' ? chunk : JSON.stringify(chunk)}\n\n`);

/** The headers of a UI message stream response. */
export const UI_MESSAGE_STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
};

/**
 * Turn `turnId` from the event after `after`, as a UI message stream, until it ends, suspends or
 * waits on an answerable question. The backlog goes at the pace the page reads it; a page that
 * falls more than `maxBufferedBytes` behind on top of that is dropped (`SlowClientError`): it asks
 * again from its `lastSeq` (the `finish` metadata of its last complete message).
 */
export function turnMessageStream(o: { session: HostedSession; feed: DurableFeed; turnId: string; after: number; maxBufferedBytes: number; signal?: AbortSignal }): ReadableStream<Uint8Array> {
  const { session, feed, turnId } = o;
  const bound = o.maxBufferedBytes;
  const projection = uiMessageProjection(turnId);
  let cleanup = () => {};
  let roomFor: (() => void) | undefined;
  let done = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let last = o.after;
      let live = false;
      const held: LogEvent[] = [];
      let answerable = new Set<string>();
      const finish = () => {
        if (done) return;
        done = true;
        cleanup();
        controller.enqueue(frame({ type: 'finish', messageMetadata: { lastSeq: last } }));
        controller.enqueue(frame('[DONE]'));
        controller.close();
      };
      /** Waiting on a question this server can answer: the page answers it with its next request. */
      const waiting = () => [...projection.openApprovals.keys()].some((callId) => answerable.has(callId));
      const apply = (e: LogEvent) => {
        if (done || e.seq <= last) return;
        last = e.seq;
        for (const c of projection.chunks(e)) controller.enqueue(frame(c));
        if ('turnId' in e && e.turnId === turnId && (e.type === 'turn/end' || e.type === 'turn/suspended')) finish();
        else if (waiting()) finish();
        else if ((controller.desiredSize ?? 0) < -bound) {
          // Twice the bound unread: the page is dropped rather than held in memory.
          done = true;
          cleanup();
          controller.error(new SlowClientError(bound - (controller.desiredSize ?? 0)));
        }
      };
      const offFeed = feed.subscribe(
        (e) => (live ? apply(e) : held.push(e)),
        (error) => {
          if (done) return;
          done = true;
          cleanup();
          controller.enqueue(frame({ type: 'error', errorText: error instanceof Error ? error.message : String(error) }));
          controller.close();
        },
      );
      const offLive = session.onLive((f) => {
        if (f.type !== 'answerable') return;
        answerable = new Set(f.calls.filter((c) => c.turnId === turnId).map((c) => c.callId));
        if (live && waiting()) finish();
      });
      const onAbort = () => {
        if (done) return;
        done = true;
        cleanup();
        roomFor?.();
        controller.close();
      };
      o.signal?.addEventListener('abort', onAbort, { once: true });
      cleanup = () => {
        offFeed();
        offLive();
        o.signal?.removeEventListener('abort', onAbort);
      };
      controller.enqueue(frame({ type: 'start', messageId: turnId }));
      void (async () => {
        try {
          await feed.settled();
          for (const e of await session.eventsAfter(o.after)) {
            while (!done && (controller.desiredSize ?? 0) <= 0) await new Promise<void>((resolve) => (roomFor = resolve));
            apply(e);
          }
          for (const f of session.liveState()) if (f.type === 'answerable') answerable = new Set(f.calls.filter((c) => c.turnId === turnId).map((c) => c.callId));
          live = true;
          for (const e of held.splice(0)) apply(e);
          if (waiting()) finish();
        } catch (e) {
          if (!done) {
            done = true;
            cleanup();
            controller.error(e);
          }
        }
      })();
    },
    pull() {
      roomFor?.();
      roomFor = undefined;
    },
    cancel() {
      done = true;
      cleanup();
      roomFor?.();
    },
  }, new ByteLengthQueuingStrategy({ highWaterMark: bound }));
}
