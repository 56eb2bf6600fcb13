/** `dsh log FILE`: prints a JSONL session log readably (validated; a torn last line is reported, not fatal). */
import type { Command } from '../command.js';
import { onFile } from '../describeError.js';

export const logCommand: Command = {
  name: 'log',
  summary: 'print a JSONL session log readably',
  synopsis: 'dsh log FILE',
  details: `Replays a JSONL session log (validating every event) and prints one line per event.
A torn last line (a write cut short by a crash) is reported on stderr, not fatal.

  -h, --help   this text

Exit: 0 printed, 1 the file cannot be read or the log is corrupt (one line on stderr), 2 bad usage.`,
  options: {},
  positionals: { min: 1, max: 1, name: 'FILE (the log to print)' },
  async run({ positionals }, io) {
    const file = positionals[0]!;
    const [{ replayJsonlLog }, { formatEvent }] = await Promise.all([import('../../adapters/log/jsonlLog.js'), import('../../runtime/views/logText.js')]);
    // A JsonlLogError (corrupt log) or a file error is thrown on: main.ts reports it in one line, exit 1.
    const r = await onFile(file, () => replayJsonlLog(file, (e) => io.out(formatEvent(e))));
    if (r.torn) io.err(`dsh log: ${r.torn.message}`);
    return 0;
  },
};
