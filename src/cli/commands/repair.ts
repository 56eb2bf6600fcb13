/** `dsh repair FILE [--yes]`: cut a log's torn tail or corrupt middle off, after a backup. */
import type { Command } from '../command.js';
import { onFile } from '../describeError.js';

export const repairCommand: Command = {
  name: 'repair',
  summary: "cut a session log's torn or corrupt part off (after a backup)",
  synopsis: 'dsh repair ID|FILE [--yes]',
  details: `Checks a session log (a session ID of the current directory, or a JSONL FILE). When it ends with
a torn line, or a line in it does not validate (invalid JSON, an invalid event, a seq gap), it
says which line, and how many bytes and lines cutting there drops; then, once confirmed (a y on
a terminal, or --yes), copies the file to FILE.bak-<time> and truncates it at the start of that
line. Everything before it is kept; everything from it on is only in the backup.

  --yes        cut without asking (needed without a terminal)
  -h, --help   this text

Exit: 0 nothing to repair or repaired, 1 not confirmed, or the file cannot be read or written,
2 bad usage.`,
  options: { yes: { type: 'boolean' } },
  positionals: { min: 1, max: 1, name: 'ID|FILE (the log to repair)' },
  async run({ values, positionals }, io) {
    const [{ replayJsonlLog, JsonlLogError }, { sessionFileOf }, fs, { lineOffsets }, { holdSessionLease }] = await Promise.all([
      import('../../adapters/log/jsonlLog.js'),
      import('../run/sessionFiles.js'),
      import('node:fs'),
      import('../run/lineOffsets.js'),
      import('../../adapters/store/sessionLease.js'),
    ]);
    const file = sessionFileOf(process.cwd(), positionals[0]!);
    // A file that is not there is reported as such (and leaves no lease file behind).
    await onFile(file, async () => fs.statSync(file));
    // Cutting a file another process is writing would lose its appends (and tear its next line):
    // a session held by dsh run/resume is refused here (LEASE_HELD), before anything is read.
    const held = await holdSessionLease(file, {
      command: 'repair',
      onLost: (e) => {
        io.err(`dsh repair: ${e.message}; stopping before cutting ${file}`);
        io.exit(1);
      },
    });
    try {
      return await repairHeld();
    } finally {
      held.release();
    }
    async function repairHeld(): Promise<number> {
      let cut: { offset: number; line: number; why: string } | undefined;
      try {
        const r = await onFile(file, () => replayJsonlLog(file, () => {}));
        if (r.torn) cut = { offset: r.torn.offset, line: r.torn.line, why: r.torn.message };
        else {
          io.out(`${file}: ${r.events} events, nothing to repair`);
          return 0;
        }
      } catch (e) {
        if (!(e instanceof JsonlLogError)) throw e;
        const offsets = await onFile(file, () => lineOffsets(file, e.line));
        cut = { offset: offsets.start, line: e.line, why: e.message };
      }
      const size = fs.statSync(file).size;
      const lines = await onFile(file, () => lineOffsets(file, Number.MAX_SAFE_INTEGER));
      const dropped = lines.lines - cut.line + 1;
      io.out(`${cut.why}`);
      io.out(`cutting at line ${cut.line} (byte ${cut.offset}) drops ${size - cut.offset} bytes: ${dropped} line(s), lines ${cut.line}..${lines.lines}; lines 1..${cut.line - 1} are kept`);
      if (values.yes !== true) {
        const ok = process.stdin.isTTY ? await confirm('cut it? a backup is written first [y/N] ') : false;
        if (!ok) {
          io.err(process.stdin.isTTY ? 'dsh repair: not cut' : 'dsh repair: not cut (no terminal to ask: pass --yes to cut)');
          return 1;
        }
      }
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const backup = `${file}.bak-${stamp}`;
      await onFile(file, async () => fs.copyFileSync(file, backup, fs.constants.COPYFILE_EXCL));
      await onFile(file, async () => fs.truncateSync(file, cut.offset));
      const after = await onFile(file, () => replayJsonlLog(file, () => {}));
      io.out(`backup: ${backup}`);
      io.out(`${file}: cut to ${cut.offset} bytes; ${after.events} events remain and validate`);
      return 0;
    }
  },
};

function confirm(question: string): Promise<boolean> {
  return new Promise((resolve) => {
    process.stdout.write(question);
    const stdin = process.stdin;
    stdin.setRawMode?.(true);
    stdin.resume();
    stdin.once('data', (d: Buffer) => {
      stdin.setRawMode?.(false);
      stdin.pause();
      const yes = /^[yY]/.test(d.toString('utf8'));
      process.stdout.write(yes ? 'y\n' : 'n\n');
      resolve(yes);
    });
  });
}
