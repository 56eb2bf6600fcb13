/** `dsh [tour] [--log FILE]`: the pipeline tour on the embedded scripted model (no key, no network). */
import type { Command } from '../command.js';
import { onFile } from '../describeError.js';

export const tourCommand: Command = {
  name: 'tour',
  summary: 'run the pipeline tour on the embedded scripted model (the default)',
  synopsis: 'dsh [tour] [--log FILE]',
  details: `Runs one turn on the embedded scripted model (no API key, no network) whose calls are allowed,
denied, approved, refused, failing and timed out, printing the session log as it grows.

  --log FILE   append the session log to a JSONL file (created if missing); a session that
               died mid-turn is first closed (its calls get INTERRUPTED)
  -h, --help   this text

Exit: 0 the turn completed, 1 it did not or a file error, 2 bad usage.`,
  options: { log: { type: 'string' } },
  positionals: { min: 0, max: 0 },
  async run({ values }, io) {
    const { runTour } = await import('../tour.js');
    const file = values.log as string | undefined;
    if (file === undefined) {
      const outcome = await runTour({ print: io.out });
      return outcome.outcome === 'completed' ? 0 : 1;
    }
    const [{ openJsonlSessionLog }, { closeOpenWork }] = await Promise.all([import('../../adapters/log/jsonlLog.js'), import('../../runtime/openWork.js')]);
    const { log, sink, torn } = await onFile(file, () => openJsonlSessionLog(file));
    if (torn) io.err(`dsh: ${torn.message}`);
    // A session that stopped mid-turn left promises open: keep them before going on.
    const closed = closeOpenWork(log, 'the session stopped before this finished (closed on resume)');
    if (closed.calls + closed.steps + closed.turns > 0) {
      io.err(`dsh: resumed an interrupted session: ${closed.calls} call(s) marked INTERRUPTED, ${closed.steps} step(s) and ${closed.turns} turn(s) closed`);
    }
    try {
      const outcome = await runTour({ log, print: io.out });
      return outcome.outcome === 'completed' ? 0 : 1;
    } finally {
      await onFile(file, () => sink.close());
    }
  },
};
