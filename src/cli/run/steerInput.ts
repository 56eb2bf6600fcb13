/**
 * The line the user types while a turn runs in `dsh run` on a terminal: raw keystrokes edited into
 * one line (printable characters, Backspace, Ctrl-U clears), sent with Enter as a steering
 * message. Ctrl-C is passed on (raw mode sends no SIGINT). While an approval question is open the
 * keystrokes belong to it (`isAsking`), so `y`/`a`/`n` never end up in the line.
 */
export interface SteerInputOptions {
  input: NodeJS.ReadStream;
  /** Shows the line being typed (undefined: nothing typed). */
  show: (text: string | undefined) => void;
  /** A line sent with Enter (never empty). */
  submit: (text: string) => void;
  onInterrupt: () => void;
  /** True while an approval question owns the keystrokes. */
  isAsking: () => boolean;
}

export interface SteerInput {
  /** Takes the keystrokes back after an approval question (which pauses the stream). */
  resume(): void;
  stop(): void;
}

/** Longest line kept: a paste beyond it is cut (a steering message is a sentence, not a file). */
const MAX_LINE_CHARS = 4000;

export function readSteerInput(options: SteerInputOptions): SteerInput {
  const { input } = options;
  let line = '';
  let stopped = false;
  const onData = (data: Buffer) => {
    if (options.isAsking()) return;
    const text = data.toString('utf8');
    for (let i = 0; i < text.length; i++) {
      const ch = text[i]!;
      if (ch === '\x03') return options.onInterrupt();
      if (ch === '\r' || ch === '\n') {
        const sent = line;
        line = '';
        options.show(undefined);
        if (sent.trim()) options.submit(sent);
        continue;
      }
      if (ch === '\x7f' || ch === '\b') line = Array.from(line).slice(0, -1).join('');
      else if (ch === '\x15') line = '';
      else if (ch === '\x1b') break; // an escape sequence (arrow keys, …): the rest of the chunk is dropped
      else if (ch >= ' ' && line.length < MAX_LINE_CHARS) line += ch;
      options.show(line || undefined);
    }
  };
  const take = () => {
    if (stopped) return;
    if (input.isTTY) input.setRawMode(true);
    input.resume();
  };
  input.on('data', onData);
  take();
  return {
    resume: take,
    stop() {
      if (stopped) return;
      stopped = true;
      input.off('data', onData);
      if (input.isTTY) input.setRawMode(false);
      input.pause();
      options.show(undefined);
    },
  };
}
