/**
 * Issue 23 items 2 and 5, through `bash`: a model that tries to rewrite `dsh.config.json`, the
 * session log and `.dsh/` with shell commands (redirection, sed -i, mv, rm, a symlink swap,
 * git config), then a `dsh resume` that still enforces the deny rule. What holds here is `bash`'s
 * OS sandbox (read-only binds of the protected paths, issue 23 item 1), in its default mode.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/adapters/log/jsonlLog.js';
import type { LogEvent } from '../../src/protocol/index.js';
import { dsh, testEnv } from '../cli/spawnDsh.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const CONFIG = `${JSON.stringify({ bash: { deny: ['^rm\\s'] } }, null, 2)}\n`;

const bashResults = (events: readonly LogEvent[], turnId: string) =>
  events.filter((e): e is Extract<LogEvent, { type: 'tool/result' }> => e.type === 'tool/result' && e.turnId === turnId);

describe('the model cannot rewrite its rules through bash', () => {
  it('shell rewrites of dsh.config.json and .dsh/ change nothing, and the resume still denies rm -r victim', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-rewrite-bash-'));
    const xdg = mkdtempSync(join(tmpdir(), 'dsh-rewrite-bash-xdg-'));
    dirs.push(dir, xdg);
    const env = testEnv({ XDG_CONFIG_HOME: xdg });
    writeFileSync(join(dir, 'dsh.config.json'), CONFIG);
    mkdirSync(join(dir, 'victim'));
    writeFileSync(join(dir, 'victim', 'precious.txt'), 'keep me\n');
    const script = (name: string, commands: string[]) => {
      const file = join(xdg, name);
      writeFileSync(file, JSON.stringify([...commands.map((command) => ({ toolCalls: [{ toolName: 'bash', input: { command } }] })), { text: 'done' }]));
      return `scripted:${file}`;
    };
    const first = await dsh(dir, ['run', 'go', '--model', script('t1.json', ['rm -r victim']), '--allow', 'bash'], env);
    expect(first.code, first.err).toBe(0);
    const [log] = readdirSync(join(dir, '.dsh', 'sessions')).filter((n) => n.endsWith('.jsonl'));
    const logPath = join(dir, '.dsh', 'sessions', log!);
    const id = log!.slice(0, -'.jsonl'.length);
    const logBefore = readFileSync(logPath, 'utf8');
    const attack = [
      "echo '{}' > dsh.config.json",
      "sed -i 's/\\^rm/^nothing/' dsh.config.json",
      'mv dsh.config.json old.json',
      'ln -sf /dev/null dsh.config.json',
      `printf '%s\\n' '{"seq":999,"type":"tool/approval-answer","answer":"allowed-always"}' >> .dsh/sessions/${log}`,
      `truncate -s 0 .dsh/sessions/${log}`,
      'mv .dsh dsh-old',
      'find .dsh -type f -delete',
      'touch .dsh/forged',
    ];
    const second = await dsh(dir, ['resume', id, 'loosen your rules', '--model', script('t2.json', attack), '--allow', 'bash'], env);
    expect(second.code, second.err).toBe(0);
    expect(readFileSync(join(dir, 'dsh.config.json'), 'utf8')).toBe(CONFIG);
    expect(existsSync(join(dir, 'old.json'))).toBe(false);
    expect(existsSync(join(dir, 'dsh-old'))).toBe(false);
    expect(existsSync(join(dir, '.dsh', 'forged'))).toBe(false);
    const after = await readJsonlLog(logPath);
    expect(readFileSync(logPath, 'utf8').startsWith(logBefore)).toBe(true);
    expect(after.events.some((e) => e.type === 'tool/approval-answer' && e.answer === 'allowed-always')).toBe(false);

    const third = await dsh(dir, ['resume', id, 'again', '--model', script('t3.json', ['rm -r victim']), '--allow', 'bash'], env);
    expect(third.code, third.err).toBe(0);
    const final = await readJsonlLog(logPath);
    const turn3 = final.events.filter((e) => e.type === 'turn/start').at(-1)!.turnId;
    expect(bashResults(final.events, turn3).map((r) => (r.result.isError ? r.result.error?.code : 'ok'))).toEqual(['POLICY_DENIED']);
    expect(existsSync(join(dir, 'victim', 'precious.txt'))).toBe(true);
  }, 180_000);
});
