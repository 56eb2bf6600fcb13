// Partial output survives the process (issue 25.10, SPEC §9.1): a `bash` call that reports output
// and then runs on; its progress reaches the log file while it runs (no commit point needed), the
// process is SIGKILLed, and on resume the call's INTERRUPTED result names the last output seen.
import { readFileSync, mkdtempSync, rmSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/adapters/log/jsonlLog.js';
import { dsh, startDsh, testEnv, waitFor } from './spawnDsh.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('a crash during a long call', () => {
  it('keeps its logged progress, and resume names the last output in its INTERRUPTED result', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-crash-progress-'));
    dirs.push(dir);
    const command = 'for i in 1 2 3; do echo "step $i of 3"; sleep 0.3; done; sleep 120';
    writeFileSync(join(dir, 'first.json'), JSON.stringify([{ toolCalls: [{ toolName: 'bash', input: { command } }] }, { text: 'never reached' }]));
    writeFileSync(join(dir, 'second.json'), JSON.stringify([{ text: 'resumed' }]));
    const env = testEnv({ XDG_CONFIG_HOME: dir });
    const run = startDsh(dir, ['run', 'build', '--allow', 'bash', '--model', `scripted:${join(dir, 'first.json')}`], env);
    const sessions = join(dir, '.dsh', 'sessions');
    const fileNow = () => {
      try {
        const name = readdirSync(sessions).find((n) => n.endsWith('.jsonl'));
        return name ? join(sessions, name) : undefined;
      } catch {
        return undefined;
      }
    };
    // The third line of output is in the file while the command still runs.
    const file = await waitFor(() => {
      const f = fileNow();
      return f && /"type":"tool\/progress".*step 3 of 3/.test(readFileSync(f, 'utf8')) && f;
    }, 'the progress in the log file', 90_000);
    run.child.kill('SIGKILL');
    const killed = await run.done;
    expect(killed.signal).toBe('SIGKILL');
    const before = await readJsonlLog(file);
    expect(before.events.filter((e) => e.type === 'tool/progress').length).toBeGreaterThan(0);
    expect(before.events.some((e) => e.type === 'tool/result')).toBe(false);

    const resumed = await dsh(dir, ['resume', file, 'go on', '--model', `scripted:${join(dir, 'second.json')}`], env);
    expect(resumed.code, resumed.err).toBe(0);
    const { events } = await readJsonlLog(file);
    const result = events.find((e) => e.type === 'tool/result');
    expect(result?.type === 'tool/result' && result.result.error?.code).toBe('INTERRUPTED');
    const content = result?.type === 'tool/result' ? result.result.content : '';
    expect(content).toMatch(/the last output it reported.*step 3 of 3/);
    expect(content).toMatch(/\(tool\/progress #\d+\)/);
    // Progress stays a view: the model's next request never held it, only the result that names it.
    expect(events.filter((e) => e.type === 'tool/progress').length).toBe(before.events.filter((e) => e.type === 'tool/progress').length);
  }, 180_000);
});
