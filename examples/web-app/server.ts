/**
 * The web app example's server (docs/web.md): dsh sessions served to a React page over the session
 * wire protocol. Each session is a JSONL log in `sessionsDir` and a runtime with dsh's built-in
 * tools working in `workspace`, the default policy (ask before `write`, `edit`, `bash`) and an
 * approval inbox the page answers through; the model is a real provider (any OpenAI-compatible
 * server). The page is the Vite build in `pageDir`. Sign-in is a cookie the page gets when it
 * loads (HttpOnly, SameSite=Strict): the handler checks it on every request, and refuses a
 * cookie-carrying request from another origin.
 *
 *   OPENAI_BASE_URL=http://localhost:11434/v1 MODEL=qwen3:8b npx tsx examples/web-app/server.ts
 *
 * (the page first: npm run example:web builds it into examples/web-app/dist/).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { askBeforeChanges, createApprovalInbox, createBuiltinTools, createRuntime, resolveModel } from 'dsh/node';
import { createSessionHandler, jsonlSessionDirectory, toNodeListener } from 'dsh/server';

export interface WebAppOptions {
  /** Where the tools read and write. */
  readonly workspace: string;
  /** Where the session logs live (`<id>.jsonl`). */
  readonly sessionsDir: string;
  /** The built page (`npm run example:web`). */
  readonly pageDir: string;
  /** A model for each turn. */
  readonly model: () => LanguageModelV3;
  readonly port?: number;
  /** The sign-in cookie's value (default: random per start; give one to keep pages signed in across restarts). */
  readonly secret?: string;
}

export interface WebApp {
  readonly url: string;
  readonly server: Server;
  /** Lets go of every session (their logs are closed; their turns suspend on the questions they wait on). */
  close(): Promise<void>;
}

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css' };
const COOKIE = 'dsh_example';

export async function startWebApp(options: WebAppOptions): Promise<WebApp> {
  mkdirSync(options.sessionsDir, { recursive: true });
  // One sign-in for this example; a real app has its users and checks who owns which session.
  const secret = options.secret ?? randomBytes(24).toString('base64url');
  const signedIn = (request: Request) => {
    const given = /(?:^|;\s*)dsh_example=([^;]+)/.exec(request.headers.get('cookie') ?? '')?.[1];
    return given !== undefined && given.length === secret.length && timingSafeEqual(Buffer.from(given), Buffer.from(secret));
  };

  const sessions = jsonlSessionDirectory({
    dir: options.sessionsDir,
    host(opened) {
      const approvals = createApprovalInbox();
      const runtime = createRuntime({ log: opened.log, approval: approvals });
      const tools = createBuiltinTools({ root: options.workspace, spillStore: runtime.spillStore });
      for (const tool of tools.all) runtime.tools.register(tool);
      runtime.hooks.on('tools/pre-execute', 'ask-before-changes', askBeforeChanges());
      return { runtime, approvals, turnOptions: () => ({ model: options.model(), followUpOptions: () => ({ model: options.model() }) }) };
    },
  });
  const api = createSessionHandler({ sessions, authorize: (request) => signedIn(request) || 'unauthenticated' });
  const listener = toNodeListener(api);

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path.startsWith('/api/')) return listener(req, res);
    const file = normalize(join(options.pageDir, path === '/' ? 'index.html' : decodeURIComponent(path)));
    if (!file.startsWith(resolve(options.pageDir) + sep) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    const headers: Record<string, string> = { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'x-content-type-options': 'nosniff' };
    if (file.endsWith('.html')) headers['set-cookie'] = `${COOKIE}=${secret}; HttpOnly; SameSite=Strict; Path=/`;
    res.writeHead(200, headers).end(readFileSync(file));
  });
  await new Promise<void>((done) => server.listen(options.port ?? 0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    server,
    async close() {
      api.close();
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      await sessions.close();
    },
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  // Everything from the environment: the provider (any OpenAI-compatible server), where the tools
  // work, where the logs go, the port.
  const here = fileURLToPath(new URL('.', import.meta.url));
  const env = process.env;
  const model = await resolveModel(`openai-compatible:${env.MODEL ?? 'qwen3:8b'}`, { baseUrl: env.OPENAI_BASE_URL ?? 'http://localhost:11434/v1', env });
  const workspace = env.WORKSPACE ?? process.cwd();
  const app = await startWebApp({
    workspace,
    sessionsDir: env.SESSIONS_DIR ?? join(workspace, '.dsh', 'web-sessions'),
    pageDir: env.PAGE_DIR ?? join(here, 'dist'),
    model: () => model,
    port: Number(env.PORT ?? 8787),
    ...(env.SESSION_SECRET ? { secret: env.SESSION_SECRET } : {}),
  });
  console.log(`open ${app.url}`);
  const stop = () => void app.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
