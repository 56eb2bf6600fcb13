// The REPL's own commands: never sent to the model; `//` escapes a leading slash.
import { describe, expect, it } from 'vitest';
import { replCommand } from '../../src/cli/run/replCommands.js';

describe('REPL commands', () => {
  it('reads /help, /exit, /session and unknown ones; ordinary lines and // are prompts', () => {
    expect(replCommand('/help')).toEqual({ kind: 'help' });
    expect(replCommand('  /EXIT ')).toEqual({ kind: 'exit' });
    expect(replCommand('/quit')).toEqual({ kind: 'exit' });
    expect(replCommand('/session')).toEqual({ kind: 'session' });
    expect(replCommand('/frob x')).toEqual({ kind: 'unknown', name: '/frob' });
    expect(replCommand('//etc/passwd is a path')).toEqual({ kind: 'text', text: '/etc/passwd is a path' });
    expect(replCommand('fix /help text')).toBeUndefined();
  });
});
