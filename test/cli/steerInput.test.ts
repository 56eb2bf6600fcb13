// The line typed while a turn runs in `dsh run` (issue 15.3): edited from raw keystrokes, sent
// with Enter; the keystrokes of an open approval question never end up in it.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { readSteerInput } from '../../src/cli/run/steerInput.js';

function fakeTty() {
  const modes: boolean[] = [];
  const stream = Object.assign(new EventEmitter(), {
    isTTY: true,
    setRawMode: (on: boolean) => void modes.push(on),
    resume: () => stream,
    pause: () => stream,
  });
  return { stream, modes, type: (s: string) => stream.emit('data', Buffer.from(s, 'utf8')) };
}

describe('steering input line', () => {
  it('edits keystrokes into a line, sends it with Enter, ignores escape sequences and empty lines', () => {
    const t = fakeTty();
    const shown: Array<string | undefined> = [];
    const sent: string[] = [];
    let asking = false;
    let interrupted = 0;
    const input = readSteerInput({ input: t.stream as never, show: (s) => shown.push(s), submit: (s) => sent.push(s), onInterrupt: () => interrupted++, isAsking: () => asking });
    expect(t.modes).toEqual([true]);
    t.type('ab');
    t.type('\x7fc');
    t.type('\x1b[A');
    t.type(' é\r');
    t.type('   \r');
    expect(sent).toEqual(['ac é']);
    expect(shown.at(-1)).toBeUndefined();
    // An open approval question owns the keystrokes.
    asking = true;
    t.type('y');
    asking = false;
    t.type('x\x15z\r');
    expect(sent).toEqual(['ac é', 'z']);
    t.type('\x03');
    expect(interrupted).toBe(1);
    input.stop();
    t.type('late\r');
    expect(sent).toEqual(['ac é', 'z']);
    expect(t.modes).toEqual([true, false]);
  });
});
