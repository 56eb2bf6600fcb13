/**
 * What `dsh serve` runs: the sessions of `<cwd>/.dsh/sessions` behind `createSessionHandler`, each
 * opened as `dsh run` would make it (the built-in tools in the working directory, the config's
 * policies and hooks, the sandbox), with an approval inbox the wire answers through. Loopback
 * only; every request needs the token (a bearer header, or `?token=` for `EventSource`), and a
 * request whose Host is not this server is refused before anything else (DNS rebinding).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSessionHandler } from '../../server/sessionHandler.js';
import { jsonlSessionDirectory } from '../../server/sessionDirectories.js';
import { toNodeListener } from '../../server/nodeListener.js';
import { createApprovalInbox } from '../../view/approvalInbox.js';
import { createAgentSession } from '../run/agentSession.js';
import type { RunFlags, RunSetupResult } from '../run/runSetup.js';
import { sessionsDir } from '../run/sessionFiles.js';

export interface ServedSessions {
  /** The API's base URL (`http://127.0.0.1:PORT/api`). */
  readonly api: string;
  readonly token: string;
  readonly dir: string;
  close(): Promise<void>;
}

export async function serveSessions(o: { cwd: string; setup: RunSetupResult; flags: RunFlags; port: number }): Promise<ServedSessions> {
  const dir = sessionsDir(o.cwd);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const token = randomBytes(24).toString('base64url');
  const tokenOk = (given: string | null) => {
    if (given === null) return false;
    const a = Buffer.from(given);
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b);
  };
  const sessions = jsonlSessionDirectory({
    dir,
    host(opened, id) {
      const approvals = createApprovalInbox();
      const agent = createAgentSession({
        cwd: o.cwd,
        log: opened.log,
        model: o.setup.model.make,
        approval: approvals,
        config: o.setup.config,
        system: o.setup.system.text,
        sessionId: id,
        ...(o.flags.allow.length > 0 ? { allow: o.flags.allow } : {}),
        ...(o.flags.plan ? { plan: true } : {}),
      });
      // Each turn gets a model of its own (the embedded one is made afresh per turn), a late steer's too.
      const turnOptions = () => ({ model: o.setup.model.make(), system: o.setup.system.text, followUpOptions: () => ({ model: o.setup.model.make() }) });
      return { runtime: agent.runtime, approvals, turnOptions };
    },
  });
  const handler = createSessionHandler({
    sessions,
    authorize: (request) => {
      const bearer = /^Bearer (.+)$/.exec(request.headers.get('authorization') ?? '')?.[1] ?? null;
      return tokenOk(bearer ?? new URL(request.url).searchParams.get('token')) || 'unauthenticated';
    },
  });
  let port = 0;
  const listener = toNodeListener(handler);
  const server = createServer((req, res) => {
    const host = req.headers.host;
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) {
      res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('wrong Host\n');
      return;
    }
    listener(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    api: `http://127.0.0.1:${port}/api`,
    token,
    dir,
    async close() {
      handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await sessions.close();
    },
  };
}
