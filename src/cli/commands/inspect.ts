/** `dsh inspect [SESSION]`: a past session in the browser, from its log (src/cli/inspect/). */
import type { Command } from '../command.js';
import { onFile } from '../describeError.js';

export const inspectCommand: Command = {
  name: 'inspect',
  summary: 'inspect a session in the browser: a local page (its statecharts, stages, log)',
  synopsis: 'dsh inspect [--follow] [ID|FILE]',
  details: `Serves a local page that replays a session from its log: each turn, step and call with its
statechart (the current state highlighted), each call's stages with their timings, the log as a
timeline you can scrub, each entry linked to its turn, step or call. Without ID|FILE: the latest
session of the current directory. The page is served on 127.0.0.1 only, on a random free port,
at a URL with a random token (printed); every asset comes from dsh itself, so it works offline.
Ctrl-C stops it. For a running session: dsh run --inspect, or --follow.

  -f, --follow  keep reading the log as another process appends to it (dsh run, dsh resume,
                a worker): each new event reaches the page as it is written
  -h, --help    this text

Exit: 0 stopped with Ctrl-C, 1 no session, or the log cannot be read or is corrupt, 2 bad usage.`,
  options: { follow: { type: 'boolean', short: 'f' } },
  positionals: { min: 0, max: 1, name: 'ID|FILE (the session to inspect)' },
  async run({ values, positionals }, io) {
    const [{ readJsonlLog }, { listSessionIds, sessionFileOf, sessionsDir }, { followJsonlLog }, { inspectedSession }, { inspectedSessionId, startInspector }, { mirroredLog }, { untilStopped }, { basename }] = await Promise.all([
      import('../../adapters/log/jsonlLog.js'),
      import('../run/sessionFiles.js'),
      import('../inspect/followedLog.js'),
      import('../inspect/inspectedSession.js'),
      import('../inspect/server.js'),
      import('../../server/mirroredLog.js'),
      import('../inspect/untilStopped.js'),
      import('node:path'),
    ]);
    const cwd = process.cwd();
    let which = positionals[0];
    if (which === undefined) {
      which = listSessionIds(cwd).at(-1);
      if (which === undefined) throw new Error(`no sessions in ${sessionsDir(cwd)} (dsh inspect FILE, or dsh run --inspect)`);
    }
    const file = sessionFileOf(cwd, which);
    const read = await onFile(file, () => readJsonlLog(file));
    const { events, torn } = read;
    // Following, a torn last line is a write in progress: it is read once its newline arrives.
    if (torn && !values.follow) io.err(`dsh inspect: ${torn.message}`);
    const id = inspectedSessionId(basename(file));
    let inspected: ReturnType<typeof inspectedSession> | undefined;
    const followed = values.follow
      ? followJsonlLog(file, read, {
          onStop: (reason) => {
            if (reason !== undefined) io.err(`dsh inspect: ${reason}`);
            inspected?.end();
          },
        })
      : undefined;
    inspected = inspectedSession({ id, log: followed?.log ?? mirroredLog(events).log, live: followed !== undefined });
    const server = await startInspector({ sessionId: id, session: inspected.session, title: file });
    io.out(`dsh inspect: ${events.length} events of ${file}${followed ? ', following it' : ''}`);
    io.out(`dsh inspect: open ${server.url}  (Ctrl-C to stop)`);
    await untilStopped();
    followed?.close();
    await server.close();
    return 0;
  },
};
