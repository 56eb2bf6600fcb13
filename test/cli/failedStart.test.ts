// Issue 32 item 7: a start that fails before its first event (an unknown provider, no key, a missing
// base URL) leaves no session behind; one that fails at its first model request (nothing listens at
// the server) is a session whose one turn failed, and `dsh sessions` says so.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dsh, testEnv } from './spawnDsh.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('a failed start', () => {
  it('before its first event: one line, exit 1 or 2, no session; at its first request: a session whose turn failed, listed as such', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-failedstart-'));
    dirs.push(dir);
    mkdirSync(join(dir, '.git'));
    const env = testEnv({ XDG_CONFIG_HOME: join(dir, '.xdg') });
    delete env.OPENAI_API_KEY;
    for (const args of [['--model', 'nope:x'], ['--model', 'openai:gpt-x'], ['--model', 'openai-compatible:m']]) {
      const r = await dsh(dir, ['run', ...args, 'hi'], env);
      expect(r.code, r.err).not.toBe(0);
      expect(r.err.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
    const sessions = join(dir, '.dsh', 'sessions');
    expect(existsSync(sessions) ? readdirSync(sessions).filter((n) => n.endsWith('.jsonl')) : []).toEqual([]);

    const r = await dsh(dir, ['run', '--model', 'openai-compatible:m', '--base-url', 'http://127.0.0.1:1/v1', 'hi'], env);
    expect(r.code).toBe(1);
    const list = await dsh(dir, ['sessions'], env);
    expect(list.out).toMatch(/ 1 +failed +hi$/m);
  }, 120_000);
});
