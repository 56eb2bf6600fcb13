/**
 * What `dsh serve` runs: the sessions of `<cwd>/.dsh/sessions` behind `createSessionHandler`, each
 * opened as `dsh run` would make it (the built-in tools in the working directory, the config's
 * policies and hooks, the sandbox), with an approval inbox the wire answers through; served on
 * loopback with a token (loopbackServer.ts).
 */
import { mkdirSync } from 'node:fs';
import { jsonlSessionDirectory } from '../../server/sessionDirectories.js';
import { createApprovalInbox } from '../../view/approvalInbox.js';
import { createAgentSession } from '../run/agentSession.js';
import type { RunFlags, RunSetupResult } from '../run/runSetup.js';
import { sessionsDir } from '../run/sessionFiles.js';
import { serveOnLoopback } from './loopbackServer.js';

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
  const server = await serveOnLoopback({ sessions, port: o.port });
  return {
    api: `${server.origin}/api`,
    token: server.token,
    dir,
    async close() {
      await server.close();
      await sessions.close();
    },
  };
}
