/** `dsh inspect [SESSION]`: a past session in the browser, from its log (src/cli/inspect/). */
import type { Command } from '../command.js';
import { onFile } from '../describeError.js';

export const inspectCommand: Command = {
  name: 'inspect',
  summary: 'inspect a session in the browser: a local page (its statecharts, stages, log)',
  synopsis: 'dsh inspect [ID|FILE]',
  details: `Serves a local page that replays a session from its log: each turn, step and call with its
statechart (the current state highlighted), each call's stages with their timings, the log as a
timeline you can scrub, each entry linked to its turn, step or call. Without ID|FILE: the latest
session of the current directory. The page is served on 127.0.0.1 only, on a random free port,
at a URL with a random token (printed); every asset comes from dsh itself, so it works offline.
Ctrl-C stops it. For a running session: dsh run --inspect.

  -h, --help   this text

Exit: 0 stopped with Ctrl-C, 1 no session, or the log cannot be read or is corrupt, 2 bad usage.`,
  options: {},
  positionals: { min: 0, max: 1, name: 'ID|FILE (the session to inspect)' },
  async run({ positionals }, io) {
    const [{ readJsonlLog }, { listSessionIds, sessionFileOf, sessionsDir }, { recordedFeed }, { startInspector }, { untilStopped }] = await Promise.all([
      import('../../adapters/log/jsonlLog.js'),
      import('../run/sessionFiles.js'),
      import('../inspect/feed.js'),
      import('../inspect/server.js'),
      import('../inspect/untilStopped.js'),
    ]);
    const cwd = process.cwd();
    let which = positionals[0];
    if (which === undefined) {
      which = listSessionIds(cwd).at(-1);
      if (which === undefined) throw new Error(`no sessions in ${sessionsDir(cwd)} (dsh inspect FILE, or dsh run --inspect)`);
    }
    const file = sessionFileOf(cwd, which);
    const { events, torn } = await onFile(file, () => readJsonlLog(file));
    if (torn) io.err(`dsh inspect: ${torn.message}`);
    const server = await startInspector({ feed: recordedFeed(file, events) });
    io.out(`dsh inspect: ${events.length} events of ${file}`);
    io.out(`dsh inspect: open ${server.url}  (Ctrl-C to stop)`);
    await untilStopped();
    await server.close();
    return 0;
  },
};
