/** `dsh log ID|FILE [--json] [--full]`: prints a session log (validated; a torn last line is reported, not fatal). */
import type { Command } from '../command.js';
import { onFile } from '../describeError.js';

export const logCommand: Command = {
  name: 'log',
  summary: 'print a session log readably (or as NDJSON)',
  synopsis: 'dsh log ID|FILE [--json] [--full]',
  details: `Replays a session log (a session ID of the current directory, or a JSONL FILE), validating
every event, and prints one line per event. A torn last line (a write cut short by a crash) is
reported on stderr, not fatal, and left in the file (dsh repair cuts it).

  --full       print texts in full (model text, results, messages), not cut to a preview
  --json       print the validated events as NDJSON
  -h, --help   this text

Exit: 0 printed, 1 the file cannot be read or the log is corrupt (one line on stderr naming the
line; dsh repair), 2 bad usage.`,
  options: { json: { type: 'boolean' }, full: { type: 'boolean' } },
  positionals: { min: 1, max: 1, name: 'ID|FILE (the log to print)' },
  async run({ values, positionals }, io) {
    const [{ replayJsonlLog }, { formatEvent }, { sessionFileOf }] = await Promise.all([
      import('../../adapters/log/jsonlLog.js'),
      import('../../protocol/logText.js'),
      import('../run/sessionFiles.js'),
    ]);
    const file = sessionFileOf(process.cwd(), positionals[0]!);
    const full = values.full === true;
    const print = values.json === true ? (e: unknown) => io.out(JSON.stringify(e)) : (e: Parameters<typeof formatEvent>[0]) => io.out(formatEvent(e, { full }));
    // A JsonlLogError (corrupt log) or a file error is thrown on: main.ts reports it in one line, exit 1.
    const r = await onFile(file, () => replayJsonlLog(file, print));
    if (r.torn) io.err(`dsh log: ${r.torn.message}`);
    return 0;
  },
};
