/** `dsh submit` / `dsh worker` as a user meets them: where the database comes from, bad input. */
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { pgUrl } from './backends.js';
import { freshDatabase } from './pgTestDb.js';

async function run(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, (l) => out.push(l), (l) => err.push(l), {});
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('dsh submit / dsh worker', () => {
  it('without a database: exit 1, saying the three ways to give one', async () => {
    const saved = process.env.DSH_DATABASE_URL;
    delete process.env.DSH_DATABASE_URL;
    try {
      const r = await run(['submit', 's1', 'hello']);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/no database: pass --database URL, set DSH_DATABASE_URL, or set "database" in dsh.config.json/);
    } finally {
      if (saved !== undefined) process.env.DSH_DATABASE_URL = saved;
    }
  });

  it('bad usage: exit 2', async () => {
    expect((await run(['worker', '--concurrency', '0'])).code).toBe(2);
    expect((await run(['submit', 'only-a-session'])).code).toBe(2);
    expect((await run(['worker', 'extra'])).code).toBe(2);
  });

  it.skipIf(!pgUrl())('a session id that is a path is refused; a good one is queued as turn 1, then 2', async () => {
    const url = await freshDatabase();
    const bad = await run(['submit', '../../etc', 'hello', '--database', url]);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/not a session id/);
    expect((await run(['submit', 'good', 'hello', '--database', url])).out).toBe('queued turn 1 of session good');
    expect((await run(['submit', 'good', 'again', '--database', url])).out).toBe('queued turn 2 of session good');
  });
});
