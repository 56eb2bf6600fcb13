/**
 * The `dsh` command.
 *   dsh [tour] [--log FILE]   run the pipeline tour on the embedded scripted model (no key, no
 *                             network); with --log, the session log is appended to a JSONL file
 *   dsh log FILE              print a JSONL session log readably (every line's checksum and event
 *                             validated: a corrupt line stops it, named with its number; a torn
 *                             last line is reported, not fatal)
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runTour } from '../../examples/pipeline-tour.js';
import { JsonlLogError, openJsonlSessionLog, replayJsonlLog } from '../adapters/log/jsonlLog.js';
import { closeOpenWork } from '../runtime/openWork.js';
import { formatEvent } from '../runtime/views/logText.js';

const USAGE = `usage:
  dsh [tour] [--log FILE]   run the pipeline tour on the embedded scripted model
  dsh log FILE              print a JSONL session log readably
  dsh --help`;

/** Runs the command; resolves with the process exit code. */
export async function main(argv: readonly string[], out: (line: string) => void = console.log, err: (line: string) => void = console.error): Promise<number> {
  const [command = 'tour', ...rest] = argv[0]?.startsWith('--') && argv[0] !== '--help' ? ['tour', ...argv] : argv;
  if (command === '--help' || command === 'help') {
    out(USAGE);
    return 0;
  }
  if (command === 'tour') {
    const logAt = rest.indexOf('--log');
    if (logAt >= 0 && !rest[logAt + 1]) {
      err(`dsh tour: --log needs a file\n${USAGE}`);
      return 2;
    }
    if (logAt < 0) {
      const outcome = await runTour({ print: out });
      return outcome.outcome === 'completed' ? 0 : 1;
    }
    const { log, sink, torn } = await openJsonlSessionLog(rest[logAt + 1]!);
    if (torn) err(`dsh: ${torn.message}`);
    // A session that stopped mid-turn left promises open: keep them before going on.
    const closed = closeOpenWork(log, 'the session stopped before this finished (closed on resume)');
    if (closed.calls + closed.steps + closed.turns > 0) {
      err(`dsh: resumed an interrupted session: ${closed.calls} call(s) marked INTERRUPTED, ${closed.steps} step(s) and ${closed.turns} turn(s) closed`);
    }
    try {
      const outcome = await runTour({ log, print: out });
      return outcome.outcome === 'completed' ? 0 : 1;
    } finally {
      await sink.close();
    }
  }
  if (command === 'log') {
    const file = rest[0];
    if (!file) {
      err(`dsh log: which file?\n${USAGE}`);
      return 2;
    }
    try {
      const r = await replayJsonlLog(file, (e) => out(formatEvent(e)));
      if (r.torn) err(`dsh log: ${r.torn.message}`);
      return 0;
    } catch (e) {
      if (e instanceof JsonlLogError) {
        err(`dsh log: ${e.message}`);
        return 1;
      }
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
        err(`dsh log: no such file: ${file}`);
        return 1;
      }
      throw e;
    }
  }
  err(`dsh: unknown command "${command}"\n${USAGE}`);
  return 2;
}

const invokedDirectly = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1]);
if (invokedDirectly) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      console.error(e);
      process.exitCode = 1;
    },
  );
}
