/**
 * The REPL's own commands: a line starting with `/` is dsh's, never sent to the model (`//text`
 * sends `/text`). Unknown ones say so and list /help.
 */
export type ReplCommand = { kind: 'help' } | { kind: 'exit' } | { kind: 'session' } | { kind: 'unknown'; name: string } | { kind: 'text'; text: string };

export const REPL_HELP = `commands (a line starting with / is not sent to the model; //text sends /text):
  /help      this list
  /session   the session's id and log file (dsh resume ID goes on with it later)
  /exit      leave (also Ctrl-D, or Ctrl-C at this prompt)
while a turn runs: type and press Enter to steer it; Ctrl-C cancels it, a second Ctrl-C quits.
at a question: y allow once, a allow always, n deny, r deny with a reason (typed, then Enter).`;

/** The command a REPL line is; undefined for an ordinary prompt. */
export function replCommand(line: string): ReplCommand | undefined {
  const t = line.trim();
  if (!t.startsWith('/')) return undefined;
  if (t.startsWith('//')) return { kind: 'text', text: t.slice(1) };
  const name = t.split(/\s+/, 1)[0]!.toLowerCase();
  if (name === '/help' || name === '/?') return { kind: 'help' };
  if (name === '/exit' || name === '/quit') return { kind: 'exit' };
  if (name === '/session') return { kind: 'session' };
  return { kind: 'unknown', name };
}
