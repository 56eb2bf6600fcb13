/** `dsh worker`: run sessions' queued turns from the Postgres queue; `dsh submit`: queue one. */
import type { Command } from '../command.js';
import { UsageError } from '../command.js';
import type { DshConfig } from '../../config/schema.js';
import { allowList } from '../run/runSetup.js';

const DATABASE_HELP = `  --database URL    the PostgreSQL database (postgres://user:password@host:port/db). Default:
                    $DSH_DATABASE_URL, else "database" of dsh.config.json. Its tables (schema dsh,
                    and graphile-worker's) are created on first use.`;

/** --database, else DSH_DATABASE_URL, else the config's "database". */
export function databaseUrl(flag: string | undefined, env: Readonly<Record<string, string | undefined>>, config: DshConfig): string {
  const url = flag ?? env.DSH_DATABASE_URL ?? config.database;
  if (!url) throw new Error('no database: pass --database URL, set DSH_DATABASE_URL, or set "database" in dsh.config.json');
  return url;
}

const positiveInt = (v: unknown, name: string, command: Command): number | undefined => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`--${name} takes a positive integer, not ${JSON.stringify(v)}`, command);
  return n;
};

export const workerCommand: Command = {
  name: 'worker',
  summary: 'run queued turns of sessions stored in Postgres (until stopped)',
  synopsis: 'dsh worker [--database URL] [--concurrency N] [--workspaces DIR] [--model SPEC] [--allow TOOL] [--ask-pages]',
  details: `Takes sessions' queued turns (dsh submit) from the PostgreSQL queue and runs them until SIGINT
or SIGTERM (then it finishes the turns it is running and exits 0). Each session's turns run in
the order they were submitted, one at a time, on whichever worker holds the session's lease; any
number of workers, on any machines, can share one database. A worker that dies (a kill, a lost
machine) stops renewing its leases: once they expire another worker takes its sessions over,
closes what it left open as dsh resume does (calls without a result get INTERRUPTED) and goes on.

${DATABASE_HELP}
  --concurrency N   sessions run at once by this worker (default 4)
  --workspaces DIR  each session works in DIR/<session id> (default .dsh/workspaces)
  --lease-ms N      lease time to live (default 30000): a dead worker's sessions move after it
  --model SPEC      as dsh run (default: "model" of dsh.config.json, else the embedded model)
  --base-url URL    the provider's server (openai-compatible)
  --allow TOOL      pre-approve a tool that asks (write, edit, bash): there is no one to ask
  --ask-pages       a question waits for a page's answer instead of being denied: pages
                    answer it over the session wire protocol (a web process on the same
                    database, dsh/server's postgresSessionDirectory; docs/protocol.md); the
                    first answer wins. The config's timeouts.approvalMs bounds the wait
  -h, --help        this text

Exit: 0 stopped, 1 the database or the model cannot be used, 2 bad usage.`,
  options: {
    database: { type: 'string' },
    concurrency: { type: 'string' },
    workspaces: { type: 'string' },
    'lease-ms': { type: 'string' },
    model: { type: 'string' },
    'base-url': { type: 'string' },
    allow: { type: 'string', multiple: true },
    'ask-pages': { type: 'boolean' },
  },
  positionals: { min: 0, max: 0 },
  async run({ values }, io) {
    const [{ loadConfig }, { openPostgresStore }, { startSessionWorker }, { resolve }] = await Promise.all([
      import('../../config/load.js'),
      import('../../adapters/store/pgStore.js'),
      import('../worker/sessionWorker.js'),
      import('node:path'),
    ]);
    const concurrency = positiveInt(values.concurrency, 'concurrency', workerCommand) ?? 4;
    const leaseMs = positiveInt(values['lease-ms'], 'lease-ms', workerCommand);
    // A stop asked for while the worker starts is carried out once it has started.
    let stopAsked = false;
    let worker: Awaited<ReturnType<typeof startSessionWorker>> | undefined;
    const onSignal = () => {
      stopAsked = true;
      void worker?.stop();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    let store: Awaited<ReturnType<typeof openPostgresStore>> | undefined;
    try {
      const { config } = await loadConfig({ cwd: process.cwd(), env: process.env });
      // Each job slot may need a connection, and each graphile-worker pool holds one for LISTEN: a
      // slot replaced after a database restart runs in a pool of its own (sessionWorker.ts).
      store = await openPostgresStore({ connectionString: databaseUrl(values.database as string | undefined, process.env, config), maxConnections: 2 * concurrency + 6 });
      worker = await startSessionWorker({
        store,
        workspaces: resolve((values.workspaces as string | undefined) ?? '.dsh/workspaces'),
        concurrency,
        ...(leaseMs !== undefined ? { leaseMs } : {}),
        ...(values.model !== undefined ? { model: values.model as string } : {}),
        ...(values['base-url'] !== undefined ? { baseUrl: values['base-url'] as string } : {}),
        config,
        allow: allowList(values.allow as string[] | undefined),
        askPages: values['ask-pages'] === true,
        say: (line) => io.err(`dsh worker: ${line}`),
      });
      io.err(`dsh worker: ${worker.id} running (concurrency ${concurrency})`);
      if (stopAsked) void worker.stop();
      await worker.done;
      return 0;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await store?.close();
    }
  },
};

export const submitCommand: Command = {
  name: 'submit',
  summary: 'queue a turn of a session stored in Postgres (dsh worker runs it)',
  synopsis: 'dsh submit SESSION MESSAGE [--database URL] [--wait]',
  details: `Queues MESSAGE as the next turn of SESSION (a name: 1-128 of A-Z a-z 0-9 . _ -; a new name starts a
new session) and prints its place among the session's turns. A session's turns run in this order,
one at a time, on a dsh worker.

${DATABASE_HELP}
  --wait            wait until the turn has ended, print its outcome and the answer
  -h, --help        this text

Exit: 0 queued (with --wait: the turn completed), 1 failed (with --wait: the turn did not
complete), 2 bad usage.`,
  options: { database: { type: 'string' }, wait: { type: 'boolean' } },
  positionals: { min: 2, max: 2, name: 'SESSION and MESSAGE' },
  async run({ values, positionals }, io) {
    const [{ loadConfig }, { openPostgresStore }, { submitTurn, migrateTurnQueue }] = await Promise.all([
      import('../../config/load.js'),
      import('../../adapters/store/pgStore.js'),
      import('../../adapters/store/pgQueue.js'),
    ]);
    const [sessionId, message] = positionals as [string, string];
    const { config } = await loadConfig({ cwd: process.cwd(), env: process.env });
    const store = await openPostgresStore({ connectionString: databaseUrl(values.database as string | undefined, process.env, config), maxConnections: 2 });
    try {
      await migrateTurnQueue(store.pool);
      const { n } = await submitTurn(store.pool, sessionId, message, config?.maxMessageBytes !== undefined ? { maxMessageBytes: config.maxMessageBytes } : {});
      io.out(`queued turn ${n} of session ${sessionId}`);
      if (values.wait !== true) return 0;
      const { turnAnswer } = await import('../../runtime/projection/turnAnswer.js');
      for (;;) {
        const events = await store.read(sessionId);
        const starts = events.filter((e) => e.type === 'turn/start');
        const start = starts[n - 1];
        const end = start && events.find((e) => e.type === 'turn/end' && e.turnId === start.turnId);
        if (start && end && end.type === 'turn/end') {
          const answer = turnAnswer(events, start.turnId);
          io.out(`turn ${n} (${start.turnId}): ${end.outcome}${end.error ? `: ${end.error}` : ''}`);
          if (answer.text) io.out(answer.text);
          return end.outcome === 'completed' ? 0 : 1;
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      await store.close();
    }
  },
};
