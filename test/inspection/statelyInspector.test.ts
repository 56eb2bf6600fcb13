/**
 * Issue 13.3: `@statelyai/inspect` as an option, for users who have Stately's tools. Its WebSocket
 * inspector is passed as a turn's `inspect` and sends the inspection events of every actor (turn,
 * step, scheduler, calls) to a loopback WebSocket server standing in for Stately's page (which is
 * hosted, so it is never the default). It is a devDependency only: nothing in src/ or machines/
 * imports it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createWebSocketInspector } from '@statelyai/inspect';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { z } from 'zod';
import { createRuntime, defineTool } from '../../src/index.js';
import { statelyInspectorOptions, type InspectOption } from '../../src/inspection.js';
import { scriptedModel } from '../../src/testing/index.js';

interface WireEvent {
  type: string;
  name?: string;
  sessionId: string;
  parentId?: string;
  rootId?: string;
  _version: string;
  definition?: string;
  event?: { type: string; input?: Record<string, unknown> };
  snapshot?: { status?: string; value?: unknown; context?: Record<string, unknown> };
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A WebSocket server on 127.0.0.1 (a free port) that keeps every message it receives, and the raw sizes. */
async function loopbackServer() {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((res) => server.once('listening', () => res()));
  const received: WireEvent[] = [];
  let bytes = 0;
  let connected!: () => void;
  const connection = new Promise<void>((res) => (connected = res));
  server.on('connection', (socket) => {
    connected();
    socket.on('message', (data) => {
      const text = String(data);
      bytes += text.length;
      received.push(JSON.parse(text) as WireEvent);
    });
  });
  cleanups.push(() => new Promise<void>((res) => server.close(() => res())));
  const { port } = server.address() as AddressInfo;
  return { url: `ws://127.0.0.1:${port}`, received, connection, bytes: () => bytes };
}

/** Waits until `check` holds (generous: this only catches a hang, not a slow machine). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

function runtime(inspect?: InspectOption) {
  const echo = defineTool({ name: 'echo', input: z.object({ text: z.string() }), isConcurrencySafe: () => true, execute: (a) => a.text });
  return createRuntime({ tools: [echo], ...(inspect ? { inspect } : {}) });
}

const model = () =>
  scriptedModel([{ toolCalls: [{ toolName: 'echo', input: { text: 'a' } }, { toolName: 'echo', input: { text: 'b' } }] }, { text: 'done' }]);

/** Runs one turn with a WebSocket inspector on a loopback server; returns what the server got. */
async function inspectOneTurn(options: { sanitize: boolean; via: 'turn' | 'runtime' }) {
  const server = await loopbackServer();
  const inspector = createWebSocketInspector({ url: server.url, ...(options.sanitize ? statelyInspectorOptions : {}) });
  cleanups.push(() => inspector.stop());
  await server.connection;
  // As the README shows: on the runtime (every actor it creates), or on one turn.
  const rt = options.via === 'runtime' ? runtime(inspector.inspect) : runtime();
  const turn = rt.startTurn({ model: model(), input: 'go', ...(options.via === 'turn' ? { inspect: inspector.inspect } : {}) });
  expect((await turn.done).outcome).toBe('completed');
  const turnActor = () => server.received.find((e) => e.type === '@xstate.actor' && e.name === 'turn-1');
  await until(
    () => server.received.some((e) => e.type === '@xstate.snapshot' && e.sessionId === turnActor()?.sessionId && e.snapshot?.status === 'done'),
    "the turn's final snapshot",
  );
  return { ...server, turnActor: turnActor()! };
}

describe('@statelyai/inspect over a loopback WebSocket', () => {
  it('every actor of a turn reaches the server: named, linked to its parent, with its definition and snapshots', async () => {
    const { received, turnActor } = await inspectOneTurn({ sanitize: false, via: 'turn' });
    expect(new Set(received.map((e) => e.type))).toEqual(new Set(['@xstate.actor', '@xstate.event', '@xstate.snapshot']));
    for (const e of received) expect(e._version).toBe('0.7.2');

    const actors = received.filter((e) => e.type === '@xstate.actor');
    const named = (name: string) => actors.filter((a) => a.name === name);
    expect(turnActor.parentId).toBeUndefined();
    expect(JSON.parse(turnActor.definition!)).toMatchObject({ id: 'turn' });
    const [step] = named('step');
    const [scheduler] = named('scheduler');
    expect(step!.parentId).toBe(turnActor.sessionId);
    expect(scheduler!.parentId).toBe(step!.sessionId);
    const calls = [...named('call-0'), ...named('call-1')];
    expect(calls).toHaveLength(2);
    for (const c of calls) {
      expect(c.parentId).toBe(scheduler!.sessionId);
      expect(JSON.parse(c.definition!)).toMatchObject({ id: 'toolCall' });
    }
    // Every event of the turn shares its root.
    expect(new Set(actors.map((a) => a.rootId))).toEqual(new Set([turnActor.sessionId]));

    // Each call actor's snapshots carry its call id and reach `settled`.
    for (const [actor, callId] of [
      ['call-0', 'call-1-0'],
      ['call-1', 'call-1-1'],
    ] as const) {
      const sessionId = named(actor)[0]!.sessionId;
      const snaps = received.filter((e) => e.type === '@xstate.snapshot' && e.sessionId === sessionId);
      expect(snaps.length).toBeGreaterThan(0);
      expect((snaps.at(-1)!.snapshot!.context!.request as { callId: string }).callId).toBe(callId);
      expect(snaps.at(-1)!.snapshot!.value).toBe('settled');
    }
    expect(received.some((e) => e.type === '@xstate.event' && e.event?.type === 'START' && e.sessionId === turnActor.sessionId)).toBe(true);
  });

  it('statelyInspectorOptions keep the data and drop the wiring (port, model, log) from contexts, inputs and snapshots', async () => {
    const plain = await inspectOneTurn({ sanitize: false, via: 'runtime' });
    const lean = await inspectOneTurn({ sanitize: true, via: 'runtime' });
    const callSnapshots = (r: typeof lean) => r.received.filter((e) => e.type === '@xstate.snapshot' && e.snapshot?.context?.request !== undefined);
    for (const s of callSnapshots(lean)) {
      expect(Object.keys(s.snapshot!.context!)).not.toContain('pipeline');
      expect(s.snapshot!.context!).toHaveProperty('request');
      expect(s.snapshot!.context!).toHaveProperty('where');
    }
    const turnSnapshots = lean.received.filter((e) => e.type === '@xstate.snapshot' && e.sessionId === lean.turnActor.sessionId);
    for (const s of turnSnapshots) {
      expect(Object.keys(s.snapshot!.context!)).not.toContain('deps');
      expect(s.snapshot!.context!.turnId).toBe('turn-1');
    }
    for (const s of lean.received.filter((e) => e.type === '@xstate.snapshot')) expect(s.snapshot).not.toHaveProperty('input');
    const inits = lean.received.filter((e) => e.event?.type === 'xstate.init' && e.event.input);
    expect(inits.length).toBeGreaterThan(0);
    for (const e of inits) for (const key of ['pipeline', 'deps', 'model', 'prepared']) expect(e.event!.input).not.toHaveProperty(key);
    expect(callSnapshots(plain).some((s) => 'pipeline' in s.snapshot!.context!)).toBe(true);
    expect(plain.received.some((e) => e.type === '@xstate.snapshot' && e.snapshot && 'input' in e.snapshot)).toBe(true);
    // Smaller on the wire (the plain run carries the wiring in every snapshot).
    expect(lean.bytes()).toBeLessThan(plain.bytes());
  });

  it('is a devDependency only: no source file under src/ or machines/ imports it', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as Record<string, Record<string, string> | undefined>;
    expect(pkg.devDependencies?.['@statelyai/inspect']).toBe('0.7.2');
    expect(pkg.dependencies?.['@statelyai/inspect']).toBeUndefined();
    expect(pkg.peerDependencies?.['@statelyai/inspect']).toBeUndefined();
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? files(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : []));
    const importers = [...files('src'), ...files('machines')].filter((f) => /(from|import\()\s*['"]@statelyai\/inspect/.test(readFileSync(f, 'utf8')));
    expect(importers).toEqual([]);
  });
});
