/**
 * Issue 32 item 1: one policy, evaluated one way. The example config of docs/policies.md (read
 * from the page itself, so the page cannot drift) gives the same verdict for each of its examples
 * in `dsh policy test` (all hold), in a `dsh run` without a terminal (deny: denied, ask: asked and
 * so denied for want of a person, allow: run), and in `dsh policy replay` of that run (nothing
 * changed).
 */
import { readFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/adapters/log/jsonlLog.js';
import type { LogEvent } from '../../src/protocol/index.js';
import { dsh, root, testEnv } from './spawnDsh.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Example {
  tool: string;
  args: Record<string, unknown>;
  verdict: 'allow' | 'ask' | 'deny';
}

/** The first JSON block of docs/policies.md that holds examples, and its examples as calls. */
function docsExample(): { config: Record<string, unknown>; examples: Example[] } {
  const page = readFileSync(join(root, 'docs', 'policies.md'), 'utf8');
  const block = [...page.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('"examples"'))!;
  const config = JSON.parse(block) as { permissions: Array<{ examples: Record<string, Array<{ tool: string; args: Record<string, unknown> }>> }>; bash: { deny: Array<{ examples: Record<string, string[]> }> } };
  const examples: Example[] = [];
  for (const rule of config.permissions) for (const [verdict, calls] of Object.entries(rule.examples)) for (const c of calls) examples.push({ tool: c.tool, args: c.args, verdict: verdict as Example['verdict'] });
  for (const p of config.bash.deny) for (const [verdict, commands] of Object.entries(p.examples)) for (const command of commands) examples.push({ tool: 'bash', args: { command }, verdict: verdict as Example['verdict'] });
  return { config, examples };
}

describe('one policy: dsh policy test, dsh run and dsh policy replay agree', () => {
  it("docs/policies.md's example config, through all three", async () => {
    const { config, examples } = docsExample();
    expect(examples.length).toBeGreaterThanOrEqual(5);
    const dir = mkdtempSync(join(tmpdir(), 'dsh-onepolicy-'));
    dirs.push(dir);
    mkdirSync(join(dir, '.git'));
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'dsh.config.json'), JSON.stringify(config));
    const env = testEnv({ XDG_CONFIG_HOME: join(dir, '.xdg') });

    const test = await dsh(dir, ['policy', 'test'], env);
    expect(test.out.trim(), test.err).toBe(`${examples.length} of ${examples.length} examples hold`);
    expect(test.code).toBe(0);

    // A model that makes each example call, one step each (so each is decided on its own).
    const script = [...examples.map((e) => ({ toolCalls: [{ toolName: e.tool, input: e.tool === 'write' ? { content: 'x\n', ...e.args } : e.args }] })), { text: 'done' }];
    writeFileSync(join(dir, 'script.json'), JSON.stringify(script));
    const run = await dsh(dir, ['run', '--model', `scripted:${join(dir, 'script.json')}`, 'go'], env);
    expect(run.code, run.err).toBe(0);
    const file = /session log: (\S+)/.exec(run.out)![1]!;
    const events: LogEvent[] = (await readJsonlLog(file)).events;
    const results = events.filter((e): e is Extract<LogEvent, { type: 'tool/result' }> => e.type === 'tool/result');
    const asked = new Set(events.filter((e) => e.type === 'tool/approval-request').map((e) => (e as { callId: string }).callId));
    const seen = results.map((r) => (r.result.isError && /DENIED$/.test(r.result.error.code) && !asked.has(r.callId) ? 'deny' : asked.has(r.callId) ? 'ask' : 'allow'));
    expect(seen).toEqual(examples.map((e) => e.verdict));

    const replay = await dsh(dir, ['policy', 'replay', file, '--fail-on', 'any-change', '--json'], env);
    expect(replay.code, replay.err).toBe(0);
    const report = JSON.parse(replay.out.trim().split('\n').at(-1)!) as { calls: number; unchanged: number; transitions: Record<string, number> };
    expect(report).toMatchObject({ calls: examples.length, unchanged: examples.length, transitions: {} });
  }, 180_000);
});
