/** `dsh serve`: the project's sessions over the session wire protocol, on loopback (docs/protocol.md). */
import type { Command } from '../command.js';
import { RUN_FLAGS_HELP } from './run.js';

/** The flags `dsh serve` shares with `dsh run`, as `dsh run --help` words them. */
const SHARED_FLAGS = RUN_FLAGS_HELP.split(/\n(?= {2}-)/)
  .filter((block) => /^ {2}--(model|base-url|allow|plan)\b/.test(block))
  .join('\n');

export const serveCommand: Command = {
  name: 'serve',
  summary: "serve the project's sessions to web pages over the session wire protocol (loopback, with a token)",
  synopsis: 'dsh serve [--port N] [--model SPEC] [--base-url URL] [--allow TOOL] [--plan]',
  details: `Serves the sessions of .dsh/sessions/ over the session wire protocol (docs/protocol.md): a page
(dsh/client's connectSession, or any SSE client) lists and creates sessions, follows a session's
log live and resumes it by seq, starts turns (on the configured model, as dsh run would: the same
tools, config, policies, hooks and sandbox), steers, cancels and resumes them, and answers their
approvals, each once. It listens on 127.0.0.1 only (a random free port unless --port), and every
request needs the token it prints: "Authorization: Bearer TOKEN", or ?token=TOKEN in the URL
(for EventSource). Requests whose Host is not this server are refused (DNS rebinding). Ctrl-C stops
it; a session open here holds its lease (another dsh resume of it is refused meanwhile).

  --port N          the port (default: a random free one)
${SHARED_FLAGS}
  -h, --help        this text

Exit: 0 stopped with Ctrl-C, 1 the model or config could not be set up, 2 bad usage.`,
  options: {
    port: { type: 'string' },
    model: { type: 'string' },
    'base-url': { type: 'string' },
    allow: { type: 'string', multiple: true },
    plan: { type: 'boolean' },
  },
  positionals: { min: 0, max: 0 },
  async run({ values }, io) {
    const { UsageError } = await import('../command.js');
    const port = values.port === undefined ? 0 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError('--port takes a port number (0 to 65535)', serveCommand);
    const [{ prepareRun, readRunFlags }, { serveSessions }, { untilStopped }] = await Promise.all([
      import('../run/runSetup.js'),
      import('../serve/serveSessions.js'),
      import('../inspect/untilStopped.js'),
    ]);
    const cwd = process.cwd();
    const flags = readRunFlags(values);
    const setup = await prepareRun({ cwd, env: process.env, flags, command: serveCommand });
    const served = await serveSessions({ cwd, setup, flags, port });
    io.out(`dsh serve: the sessions of ${served.dir} on ${served.api} (model ${setup.model.model.spec})`);
    io.out(`dsh serve: token ${served.token}  (Authorization: Bearer TOKEN, or ?token=TOKEN; Ctrl-C to stop)`);
    await untilStopped();
    await served.close();
    return 0;
  },
};
