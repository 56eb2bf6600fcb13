// `dsh run` with command rules in dsh.config.json (issue 23 item 3), as a user runs it: a real
// process, a scripted model, no terminal (so every question is denied unless --allow answers it).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/adapters/log/jsonlLog.js';
import { dsh, testEnv } from './spawnDsh.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function run(commands: string[], args: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-cmdrules-'));
  const xdg = mkdtempSync(join(tmpdir(), 'dsh-cmdrules-xdg-'));
  dirs.push(dir, xdg);
  mkdirSync(join(dir, 'victim'));
  writeFileSync(join(dir, 'victim', 'precious.txt'), 'keep me\n');
  writeFileSync(join(dir, 'dsh.config.json'), JSON.stringify({ bash: { deny: ['^rm\\s'], allow: ['^echo\\s', '^ls\\b'] } }));
  const script = join(xdg, 'script.json');
  writeFileSync(script, JSON.stringify([...commands.map((command) => ({ toolCalls: [{ toolName: 'bash', input: { command } }] })), { text: 'done' }]));
  const r = await dsh(dir, ['run', 'go', '--model', `scripted:${script}`, ...args], testEnv({ XDG_CONFIG_HOME: xdg }));
  expect(r.code, r.err).toBe(0);
  const [log] = readdirSync(join(dir, '.dsh', 'sessions')).filter((n) => n.endsWith('.jsonl'));
  const events = (await readJsonlLog(join(dir, '.dsh', 'sessions', log!))).events;
  const codes = events.filter((e) => e.type === 'tool/result').map((e) => (e.type === 'tool/result' && e.result.isError ? e.result.error?.code : 'ok'));
  const asked = events.filter((e) => e.type === 'tool/approval-request').length;
  return { dir, codes, asked };
}

describe('dsh run with bash.allow and bash.deny', () => {
  it('covered lines run without a question; others are asked (denied without a terminal); rm stays denied', async () => {
    const { dir, codes, asked } = await run(['echo hi && ls', 'echo hi && touch x', 'x=rm; $x -r victim', 'nice -n 5 rm -r victim']);
    // rm matches a deny pattern: denied before anyone is asked (issue 32 item 2); the others are asked.
    expect(codes).toEqual(['ok', 'APPROVAL_DENIED', 'APPROVAL_DENIED', 'POLICY_DENIED']);
    expect(asked).toBe(2);
    expect(existsSync(join(dir, 'x'))).toBe(false);
    expect(existsSync(join(dir, 'victim', 'precious.txt'))).toBe(true);
  }, 120_000);

  it('--allow bash answers the questions, but never lifts a deny pattern', async () => {
    const { dir, codes } = await run(['echo hi && touch x', 'timeout 5 rm -r victim', "bash -c 'rm -r victim'"], ['--allow', 'bash']);
    expect(codes).toEqual(['ok', 'POLICY_DENIED', 'POLICY_DENIED']);
    expect(existsSync(join(dir, 'x'))).toBe(true);
    expect(existsSync(join(dir, 'victim', 'precious.txt'))).toBe(true);
  }, 120_000);
});
