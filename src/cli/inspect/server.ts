/**
 * The inspector's local web server: one session over the session wire protocol
 * (docs/protocol.md, the same API `dsh serve` and `dsh/server` serve), and the page that shows it.
 * Loopback only, a random free port, every asset from this package (loopbackServer.ts). The page's
 * URL carries a random token; the page and every API request need it (the page sends it as
 * `?token=` on its event stream and as a bearer header on its answers).
 *
 *   GET  /?t=TOKEN                 the page (its <meta> names the session the API serves)
 *   GET  /assets/<module>.js        the page's ES modules; /assets/style.css its stylesheet
 *   GET  /machines/callStageNames.js the stage names the page shares with the machines
 *   GET  /diagrams/<machine>.svg    the generated statechart of a machine
 *   /api/…                          the session wire protocol, for this one session
 */
import type { ServerResponse } from 'node:http';
import { WIRE_SESSION_ID } from '../../protocol/wire.js';
import { summaryOf, type HostedSession } from '../../server/hostedSession.js';
import { serveOnLoopback } from '../serve/loopbackServer.js';
import { diagramSvg, pageScript, pageStylesheet } from './assets.js';

export interface InspectorServer {
  /** The page's URL, with its token. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

export interface InspectorOptions {
  /** The session's id, as the API's URLs name it (`inspectedSessionId`). */
  sessionId: string;
  /** The session the page shows (inspectedSession.ts); a run's, once its log is open. */
  session: HostedSession | PromiseLike<HostedSession>;
  /** What the page is titled (the log file, the run's session id). */
  title: string;
  /** Default: a random free port. */
  port?: number;
}

const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

const PAGE = (title: string, sessionId: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="dsh-session" content="${escapeHtml(sessionId)}">
<meta name="dsh-title" content="${escapeHtml(title)}">
<title>dsh inspect: ${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/style.css">
<script type="module" src="/assets/main.js"></script>
</head>
<body>
<noscript>The dsh inspector needs JavaScript.</noscript>
</body>
</html>
`;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A session id the API can name for a log called `name` (its file name without `.jsonl`, else `session`). */
export function inspectedSessionId(name: string): string {
  const id = name.replace(/\.jsonl$/, '');
  return WIRE_SESSION_ID.test(id) ? id : 'session';
}

export async function startInspector(options: InspectorOptions): Promise<InspectorServer> {
  const { sessionId } = options;
  const send = (res: ServerResponse, status: number, type: string, body: string) => {
    res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': `${type}; charset=utf-8`, 'content-length': Buffer.byteLength(body) });
    res.end(body);
    return true;
  };
  const server = await serveOnLoopback({
    ...(options.port !== undefined ? { port: options.port } : {}),
    sessions: {
      list: async () => [summaryOf(await options.session)],
      open: async (id) => (id === sessionId ? await options.session : undefined),
    },
    async page(_req, res, url, tokenOk) {
      const path = url.pathname;
      if (path === '/') {
        if (!tokenOk(url.searchParams.get('t'))) return send(res, 403, 'text/plain', 'open the URL dsh printed (it carries the token)\n');
        return send(res, 200, 'text/html', PAGE(options.title, sessionId));
      }
      if (path === '/assets/style.css') return send(res, 200, 'text/css', pageStylesheet());
      if (path.endsWith('.js')) {
        const js = await pageScript(path);
        return js !== undefined && send(res, 200, 'text/javascript', js);
      }
      const m = /^\/diagrams\/([A-Za-z]+)\.svg$/.exec(path);
      if (m) {
        const svg = diagramSvg(m[1]!);
        return svg !== undefined && send(res, 200, 'image/svg+xml', svg);
      }
      return false;
    },
  });
  return {
    url: `${server.origin}/?t=${server.token}`,
    port: server.port,
    close: () => server.close(),
  };
}
