/** `dsh sessions`: the sessions logged under .dsh/sessions of the current directory. */
import type { Command } from '../command.js';

export const sessionsCommand: Command = {
  name: 'sessions',
  summary: 'list the sessions of the current directory',
  synopsis: 'dsh sessions',
  details: `Lists the sessions logged in .dsh/sessions/ of the current directory, oldest first: id, start
(UTC), number of turns, the last turn's outcome and the first prompt (completed, cancelled, failed, max-steps;
open: the process stopped mid-turn, dsh resume closes it). A log that does not validate is listed
as corrupt, with the reason.

  -h, --help   this text

Exit: 0 listed (also when there are none), 1 the directory cannot be read, 2 bad usage.`,
  options: {},
  positionals: { min: 0, max: 0 },
  async run(_args, io) {
    const [{ listSessionIds, sessionsDir }, { readJsonlLog }, { summarizeSession }, { describeError }] = await Promise.all([
      import('../run/sessionFiles.js'),
      import('../../adapters/log/jsonlLog.js'),
      import('../run/sessionSummary.js'),
      import('../describeError.js'),
    ]);
    const cwd = process.cwd();
    const ids = listSessionIds(cwd);
    if (ids.length === 0) {
      io.out(`no sessions in ${sessionsDir(cwd)}`);
      return 0;
    }
    const rows: string[][] = [['ID', 'START (UTC)', 'TURNS', 'LAST', 'FIRST PROMPT']];
    for (const id of ids) {
      try {
        const { events, torn } = await readJsonlLog(`${sessionsDir(cwd)}/${id}.jsonl`);
        const s = summarizeSession(events);
        const start = s.start === undefined ? '-' : new Date(s.start).toISOString().replace('T', ' ').slice(0, 19);
        rows.push([id, start, String(s.turns), s.lastOutcome + (torn ? ' (torn tail)' : ''), s.title ?? '-']);
      } catch (e) {
        rows.push([id, '-', '-', `corrupt: ${describeError(e)}`, '-']);
      }
    }
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    for (const r of rows) io.out(r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
    return 0;
  },
};
