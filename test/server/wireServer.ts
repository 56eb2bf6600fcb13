/**
 * A real `node:http` server running `createSessionHandler` over one or more in-process sessions,
 * for the wire protocol's tests: a runtime whose `write` asks before it runs (and counts its runs),
 * whose `wait` finishes when the test opens its gate, and whose model is scripted per test.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as z from 'zod';
import { scriptedModel, type ScriptedStep } from '../../src/adapters/model/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { createMemoryLog } from '../../src/runtime/log/sessionLog.js';
import { createSessionHandler, hostRuntime, memorySessionDirectory, toNodeListener, type Authorize, type SessionHandler, type SessionHandlerOptions } from '../../src/server/index.js';
import { createApprovalInbox } from '../../src/view/approvalInbox.js';

export const TOKEN = 'test-token';

/** Lets the bearer token through for every session and action. */
export const bearer: Authorize = (request) => (request.headers.get('authorization') === `Bearer ${TOKEN}` ? true : 'unauthenticated');

export interface WireSession {
  readonly rt: ReturnType<typeof createRuntime>;
  readonly model: ReturnType<typeof scriptedModel>;
  /** Paths `write` wrote, one entry per run of its body. */
  readonly writes: string[];
  open(name: string): void;
}

export interface WireServer {
  readonly base: string;
  readonly handler: SessionHandler;
  readonly server: Server;
  session(id: string): WireSession;
  close(): Promise<void>;
}

export async function startWireServer(
  script: (id: string) => ScriptedStep[],
  options: Partial<Omit<SessionHandlerOptions, 'sessions'>> & { ids?: () => string } = {},
): Promise<WireServer> {
  const sessions = new Map<string, WireSession>();
  const directory = memorySessionDirectory({
    ...(options.ids ? { newId: options.ids } : {}),
    host(id) {
      const gates = new Map<string, () => void>();
      const waits = new Map<string, Promise<void>>();
      const gate = (name: string) => {
        if (!waits.has(name)) waits.set(name, new Promise<void>((r) => gates.set(name, r)));
        return waits.get(name)!;
      };
      const writes: string[] = [];
      const write = defineTool({ name: 'write', input: z.object({ path: z.string() }), execute: async ({ path }) => (writes.push(path), `wrote ${path}`) });
      const wait = defineTool({ name: 'wait', input: z.object({ name: z.string() }), isConcurrencySafe: () => true, execute: async ({ name }) => (await gate(name), `${name} done`) });
      const approvals = createApprovalInbox();
      const model = scriptedModel(script(id));
      const rt = createRuntime({ log: createMemoryLog(), tools: [write, wait], approval: approvals });
      rt.hooks.on('tools/pre-execute', 'ask-before-write', (call, next) => (call.toolName === 'write' ? { kind: 'ask', reason: 'changes a file' } : next()));
      sessions.set(id, { rt, model, writes, open: (name) => (gate(name), gates.get(name)!()) });
      return hostRuntime({ id, runtime: rt, approvals, turnOptions: () => ({ model }) });
    },
  });
  const handler = createSessionHandler({ authorize: bearer, ...options, sessions: directory });
  const server = createServer(toNodeListener(handler));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  return {
    base,
    handler,
    server,
    session: (id) => sessions.get(id)!,
    close: () =>
      new Promise<void>((resolve) => {
        handler.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let keys = 0;
/** A POST as a page sends it: JSON, the token, a fresh idempotency key unless given. */
export function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'idempotency-key': `k-${++keys}-${Math.random()}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A new session on `server`; returns its URL. */
export async function newSession(server: WireServer): Promise<{ id: string; url: string }> {
  const r = await post(`${server.base}/sessions`, {});
  const { id } = (await r.json()) as { id: string };
  return { id, url: `${server.base}/sessions/${id}` };
}

/** Lets promise chains, timers and sockets run until `cond` holds (a bound that only catches a hang). */
export async function until(cond: () => boolean | Promise<boolean>, what = 'condition'): Promise<void> {
  for (let i = 0; i < 5_000; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`never reached: ${what}`);
}
