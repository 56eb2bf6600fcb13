/**
 * `POST …/chat` read by the AI SDK itself (`ai`'s `DefaultChatTransport` and `readUIMessageStream`,
 * what `useChat` runs): a user message starts a turn, streamed as one assistant message whose tool
 * part asks for approval; the approval answered in that message (as `addToolApprovalResponse`
 * leaves it) continues the turn through the exactly-once path, the body runs once, and a retried
 * request starts nothing more. A denial with a reason reaches the model.
 */
import { connect } from 'node:net';
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/protocol/index.js';
import { TOKEN, newSession, startWireServer, until, type WireServer } from './wireServer.js';

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const WRITE = [{ text: 'Writing.', toolCalls: [{ toolName: 'write', input: { path: 'x.txt' } }] }, { text: 'Written.' }];

/** One `useChat` request: the messages so far; resolves with the assistant message as the stream left it. */
async function send(url: string, messages: UIMessage[]): Promise<UIMessage> {
  const transport = new DefaultChatTransport({ api: `${url}/chat`, headers: { authorization: `Bearer ${TOKEN}` } });
  const last = messages[messages.length - 1]!;
  const stream = await transport.sendMessages({ chatId: 's', messages, abortSignal: undefined, trigger: 'submit-message', messageId: undefined });
  let message: UIMessage | undefined;
  for await (const m of readUIMessageStream({ stream, ...(last.role === 'assistant' ? { message: last } : {}) })) message = m;
  return message!;
}

const user = (id: string, text: string): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] });
type ToolPart = { type: string; state: string; toolCallId: string; approval?: { id: string; approved?: boolean; reason?: string }; output?: unknown };
const toolParts = (m: UIMessage) => m.parts.filter((p) => p.type.startsWith('tool-')) as unknown as ToolPart[];
/** The assistant message after the person answered its question (what `addToolApprovalResponse` does). */
const answered = (m: UIMessage, approved: boolean, reason?: string): UIMessage => ({
  ...m,
  parts: m.parts.map((p) => {
    const t = p as unknown as ToolPart;
    return t.state === 'approval-requested' ? ({ ...t, state: 'approval-responded', approval: { id: t.approval!.id, approved, ...(reason ? { reason } : {}) } } as unknown as typeof p) : p;
  }),
});

describe('the session for useChat (the AI SDK UI message stream)', () => {
  it('a user message starts a turn; its tool part asks; the answer in the message continues it; the body runs once', async () => {
    server = await startWireServer(() => WRITE);
    const s = await newSession(server);
    const first = await send(s.url, [user('u1', 'write x')]);
    expect(first.id).toBe('turn-1');
    expect(first.role).toBe('assistant');
    const [part] = toolParts(first);
    const log = () => server!.session(s.id).rt.log.events() as LogEvent[];
    const request = log().find((e) => e.type === 'tool/approval-request')!;
    expect(part).toMatchObject({ type: 'tool-write', state: 'approval-requested', approval: { id: String(request.seq) } });
    expect(first.parts.find((p) => p.type === 'text')).toMatchObject({ text: 'Writing.' });
    expect(first.metadata).toEqual({ lastSeq: expect.any(Number) });

    // A retry of the first request (same message id): the same turn, no second one.
    const again = await send(s.url, [user('u1', 'write x')]);
    expect(again.id).toBe('turn-1');

    const done = await send(s.url, [user('u1', 'write x'), answered(first, true)]);
    expect(toolParts(done)[0]).toMatchObject({ state: 'output-available', output: 'wrote x.txt' });
    expect(done.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)).toEqual(['Writing.', 'Written.']);
    expect(server.session(s.id).writes).toEqual(['x.txt']);
    expect(log().filter((e) => e.type === 'turn/start')).toHaveLength(1);
    expect(log().filter((e) => e.type === 'tool/approval-answer')).toHaveLength(1);

    // The same answer sent again (a retried request): nothing runs twice.
    await send(s.url, [user('u1', 'write x'), answered(first, true)]);
    expect(server.session(s.id).writes).toEqual(['x.txt']);
  });

  it('a denial with a reason: the part shows it denied, the body never runs, the model reads the reason', async () => {
    server = await startWireServer(() => [{ text: 'Writing.', toolCalls: [{ toolName: 'write', input: { path: 'x.txt' } }] }, { text: 'Understood.' }]);
    const s = await newSession(server);
    const first = await send(s.url, [user('u1', 'write x')]);
    const done = await send(s.url, [user('u1', 'write x'), answered(first, false, 'not in this repo')]);
    expect(toolParts(done)[0]).toMatchObject({ state: 'output-denied' });
    expect(server.session(s.id).writes).toEqual([]);
    expect(JSON.stringify(server.session(s.id).model.calls[1]!.prompt)).toContain('not in this repo');
  });

  it('a request that is not a chat request is refused with its code; without credentials, 401', async () => {
    server = await startWireServer(() => WRITE);
    const s = await newSession(server);
    const post = (body: string, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) =>
      fetch(`${s.url}/chat`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    expect((await post('{"messages":[]}')).status).toBe(400);
    expect((await post('{"messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"  "}]}]}')).status).toBe(400);
    expect((await post('{"messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"go"}]}]}', {})).status).toBe(401);
    expect(server.session(s.id).rt.log.events()).toEqual([]);
  });

  it('a chat stream whose reader never reads is dropped at the bound, not buffered; it asks again from its lastSeq', async () => {
    const bound = 64 * 1024;
    server = await startWireServer(() => [{ text: 'Waiting.', toolCalls: [{ toolName: 'wait', input: { name: 'g' } }] }, { text: 'Done.' }], { maxBufferedBytes: bound });
    const s = await newSession(server);
    const url = new URL(`${s.url}/chat`);
    const body = JSON.stringify({ messages: [user('u1', 'go')] });
    // A raw socket that sends its request and never reads a byte.
    // The server's end of the page's connection: whether the server still holds it.
    let serverSide: import('node:net').Socket | undefined;
    server.server.once('connection', (c) => (serverSide = c));
    const socket = connect(Number(url.port), url.hostname);
    socket.pause();
    socket.on('error', () => undefined);
    socket.write(`POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    const rt = server.session(s.id).rt;
    await until(() => rt.log.events().some((e) => e.type === 'tool/call'), 'the turn waits in its call');
    const held = () => serverSide !== undefined && !serverSide.destroyed;
    expect(held()).toBe(true);
    // The turn's own text, far more than the socket's buffers and the bound together.
    for (let i = 0; i < 20_000 && held(); i++) {
      rt.log.append({ type: 'llm/stream', turnId: 'turn-1', stepIndex: 0, kind: 'text', text: `${i} ${'x'.repeat(200)}` });
      if (i % 500 === 499) await new Promise((r) => setImmediate(r));
    }
    await until(() => !held(), 'the server cuts the stalled chat stream');
    // What reached the page ends cut short: no finish, so useChat asks again from its lastSeq.
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString()));
    const ended = new Promise((resolve) => socket.on('close', resolve));
    socket.resume();
    await ended;
    expect(received).toContain('"type":"text-delta"');
    expect(received).not.toContain('[DONE]');
    server.session(s.id).open('g');
    await until(() => rt.log.events().some((e) => e.type === 'turn/end'), 'the turn ends');
    expect(rt.log.events().at(-1)).toMatchObject({ type: 'turn/end', outcome: 'completed' });
  }, 120_000);
});
