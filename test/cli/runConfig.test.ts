// `dsh run` / `dsh resume` with a dsh.config.json (and a user-level file): real processes from
// source in temp directories, no terminal, no key, no network. XDG_CONFIG_HOME points at a temp
// directory, so the user file is the test's own (or none).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/adapters/log/jsonlLog.js';
import type { LogEvent } from '../../src/protocol/index.js';
import { planModeReason } from '../../src/runtime/policies/planMode.js';
import { dsh, testEnv } from './spawnDsh.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const README = '# app\n\nTODO: write docs\n';

/** A workspace with a README, `config` as its dsh.config.json (a string is written as is), and an empty XDG_CONFIG_HOME. */
function workspace(config?: unknown, user?: unknown): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-runcfg-'));
  const xdg = mkdtempSync(join(tmpdir(), 'dsh-runcfg-xdg-'));
  dirs.push(dir, xdg);
  writeFileSync(join(dir, 'README.md'), README);
  if (config !== undefined) writeFileSync(join(dir, 'dsh.config.json'), typeof config === 'string' ? config : JSON.stringify(config));
  if (user !== undefined) {
    mkdirSync(join(xdg, 'dsh'));
    writeFileSync(join(xdg, 'dsh', 'config.json'), JSON.stringify(user));
  }
  return { dir, env: testEnv({ XDG_CONFIG_HOME: xdg }) };
}

const sessionFiles = (dir: string) => (existsSync(join(dir, '.dsh', 'sessions')) ? readdirSync(join(dir, '.dsh', 'sessions')).filter((n) => n.endsWith('.jsonl')) : []);

async function eventsOf(dir: string): Promise<LogEvent[]> {
  const [name] = sessionFiles(dir);
  expect(name).toBeDefined();
  return (await readJsonlLog(join(dir, '.dsh', 'sessions', name!))).events;
}

/** tool name → the error code of its result (or 'ok'), and whether an approval was asked. */
function outcomes(events: readonly LogEvent[]) {
  const names = new Map<string, string>();
  for (const e of events) if (e.type === 'tool/call') names.set(e.callId, e.toolName);
  const out: Record<string, string> = {};
  const reasons: Record<string, string> = {};
  for (const e of events) {
    if (e.type !== 'tool/result') continue;
    const name = names.get(e.callId)!;
    out[name] = e.result.isError ? (e.result.error?.code ?? 'error') : 'ok';
    if (e.result.error) reasons[name] = e.result.error.message;
  }
  const asked = events.filter((e) => e.type === 'tool/approval-request').length;
  return { out, reasons, asked };
}

const HANG = 120_000;

describe('dsh run with dsh.config.json', () => {
  it('a bad config is one line naming the file and the field, exit 1, and no session is made (run and resume)', async () => {
    const { dir, env } = workspace({ permissions: [{ tool: 'edit', decision: 'maybe' }] });
    const r = await dsh(dir, ['run', '--model', 'embedded', 'go'], env);
    expect(r.code).toBe(1);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/dsh\.config\.json: permissions\[0\]\.decision: expected "allow" \| "deny" \| "ask", got "maybe"/);
    expect(existsSync(join(dir, '.dsh'))).toBe(false);

    // A bad user file is named too.
    const u = workspace(undefined, { concurrency: 0 });
    const ur = await dsh(u.dir, ['run', '--model', 'embedded', 'go'], u.env);
    expect(ur.code).toBe(1);
    expect(ur.err).toMatch(/dsh[/\\]config\.json: concurrency: /);
    expect(existsSync(join(u.dir, '.dsh'))).toBe(false);

    // resume: the session's log is left as it was.
    const ok = workspace();
    expect((await dsh(ok.dir, ['run', '--model', 'embedded', 'first'], ok.env)).code).toBe(0);
    const [name] = sessionFiles(ok.dir);
    const file = join(ok.dir, '.dsh', 'sessions', name!);
    const before = readFileSync(file, 'utf8');
    writeFileSync(join(ok.dir, 'dsh.config.json'), '{"timeouts":{"bashMs":"soon"}}');
    const rr = await dsh(ok.dir, ['resume', name!.slice(0, -6), 'again'], ok.env);
    expect(rr.code).toBe(1);
    expect(rr.err).toMatch(/dsh\.config\.json: timeouts\.bashMs: /);
    expect(readFileSync(file, 'utf8')).toBe(before);
  }, HANG);

  it('a denied call names who decided, in the output, in the log and in dsh log (issue 26: provenance)', async () => {
    const { dir, env } = workspace({ permissions: [{ tool: 'edit', decision: 'deny' }], bash: { deny: ['^git ', '^ls\\s'] } });
    const r = await dsh(dir, ['run', '--model', 'embedded', 'go', '--allow', 'bash'], env);
    expect(r.code, r.err).toBe(0);
    const events = await eventsOf(dir);
    const decisions = events.flatMap((e) => (e.type === 'tool/result' && e.result.decision ? [[e.toolName, e.result.decision]] : []));
    expect(decisions).toEqual([
      ['edit', { stage: 'pre-execute', outcome: 'deny', by: 'dsh:permissions', rule: 'permissions[0] (tool "edit")' }],
      ['bash', { stage: 'pre-execute', outcome: 'deny', by: 'dsh:bash-commands', rule: 'bash.deny[1] /^ls\\s/' }],
    ]);
    expect(r.out).toContain('· pre-execute deny by dsh:permissions (permissions[0] (tool "edit"))');
    const [name] = sessionFiles(dir);
    const log = await dsh(dir, ['log', join(dir, '.dsh', 'sessions', name!)], env);
    expect(log.out).toContain('· pre-execute deny by dsh:bash-commands (bash.deny[1] /^ls\\s/)');
  }, HANG);

  it('--plan: read, grep and glob run; edit and bash are POLICY_DENIED with the plan-mode reason, even with --allow, and nothing is asked', async () => {
    const { dir, env } = workspace();
    const r = await dsh(dir, ['run', '--model', 'embedded', 'go', '--plan', '--allow', 'edit,bash'], env);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/plan mode \(--plan\): only read-only tools run \(read, grep, glob\)/);
    const { out, reasons, asked } = outcomes(await eventsOf(dir));
    expect(out).toEqual({ read: 'ok', grep: 'ok', glob: 'ok', edit: 'POLICY_DENIED', bash: 'POLICY_DENIED' });
    expect(reasons.edit).toContain(planModeReason('edit', ['read', 'grep', 'glob']));
    expect(reasons.bash).toContain(planModeReason('bash', ['read', 'grep', 'glob']));
    expect(asked).toBe(0);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe(README);
  }, HANG);

  it('config "plan": true (from the user file) turns plan mode on; resume --plan turns it on for that run', async () => {
    const { dir, env } = workspace(undefined, { plan: true });
    const r = await dsh(dir, ['run', '--model', 'embedded', 'go', '--allow', 'edit'], env);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/plan mode \(config "plan": true\)/);
    expect(outcomes(await eventsOf(dir)).out.edit).toBe('POLICY_DENIED');

    const other = workspace();
    expect((await dsh(other.dir, ['run', '--model', 'embedded', 'first', '--allow', 'edit'], other.env)).code).toBe(0);
    writeFileSync(join(other.dir, 'README.md'), README);
    const [name] = sessionFiles(other.dir);
    const rr = await dsh(other.dir, ['resume', name!.slice(0, -6), 'again', '--plan', '--allow', 'edit'], other.env);
    expect(rr.code, rr.err).toBe(0);
    const events = await eventsOf(other.dir);
    const turn2 = events.slice(events.findIndex((e) => e.type === 'turn/start' && e.turnId !== 'turn-1'));
    expect(outcomes(turn2).out).toMatchObject({ read: 'ok', edit: 'POLICY_DENIED' });
    expect(readFileSync(join(other.dir, 'README.md'), 'utf8')).toBe(README);
  }, HANG);

  it('a permission rule "deny" for edit is POLICY_DENIED without asking; "allow" for bash runs it without asking; no match falls to the default ask', async () => {
    const { dir, env } = workspace({
      permissions: [
        { tool: 'edit', path: '*.md', decision: 'deny', reason: 'docs are frozen' },
        { tool: 'bash', decision: 'allow' },
      ],
    });
    const r = await dsh(dir, ['run', '--model', 'embedded', 'go'], env);
    expect(r.code, r.err).toBe(0);
    const { out, reasons, asked } = outcomes(await eventsOf(dir));
    expect(out).toEqual({ read: 'ok', grep: 'ok', glob: 'ok', edit: 'POLICY_DENIED', bash: 'ok' });
    expect(reasons.edit).toContain('docs are frozen');
    expect(asked).toBe(0);
    expect(r.err).not.toMatch(/no terminal to ask/);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe(README);

    // A rule that does not match (another path) leaves the default: edit is asked (and denied without a terminal).
    const other = workspace({ permissions: [{ tool: 'edit', path: 'src/**', decision: 'deny' }] });
    const o = await dsh(other.dir, ['run', '--model', 'embedded', 'go'], other.env);
    expect(o.code, o.err).toBe(0);
    expect(outcomes(await eventsOf(other.dir)).out.edit).toBe('APPROVAL_DENIED');
    expect(o.err).toMatch(/denied edit README\.md .*pre-approve with --allow edit/);
  }, HANG);

  it('a config "ask" rule is answered yes by --allow, but a "deny" rule is not lifted by it', async () => {
    const { dir, env } = workspace({ permissions: [{ tool: 'read', decision: 'ask' }, { tool: 'edit', decision: 'deny' }] });
    const r = await dsh(dir, ['run', '--model', 'embedded', 'go', '--allow', 'read,edit'], env);
    expect(r.code, r.err).toBe(0);
    const { out } = outcomes(await eventsOf(dir));
    expect(out.read).toBe('ok');
    expect(out.edit).toBe('POLICY_DENIED');
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe(README);
  }, HANG);

  it('a bash.deny pattern matching the command is denied (before any question), even with --allow bash and a config "allow" rule', async () => {
    const { dir, env } = workspace({ bash: { deny: ['^ls\\b'] }, permissions: [{ tool: 'bash', decision: 'allow' }] });
    const r = await dsh(dir, ['run', '--model', 'embedded', 'go', '--allow', 'bash'], env);
    expect(r.code, r.err).toBe(0);
    const { out } = outcomes(await eventsOf(dir));
    expect(out.bash).toBe('POLICY_DENIED');
  }, HANG);

  it('"model" from the config is used when --model is not given; --model wins over it', async () => {
    const { dir, env } = workspace();
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify([{ text: 'hello from the config model' }]));
    writeFileSync(join(dir, 'dsh.config.json'), JSON.stringify({ model: `scripted:${script}` }));
    const r = await dsh(dir, ['run', 'go'], env);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('hello from the config model');
    const events = await eventsOf(dir);
    expect(events.some((e) => e.type === 'tool/call')).toBe(false);

    const explicit = await dsh(dir, ['run', 'go', '--model', 'embedded'], env);
    expect(explicit.code, explicit.err).toBe(0);
    expect(explicit.out).not.toContain('hello from the config model');
    expect(explicit.out).toMatch(/embedded scripted model/);

    // A config model that cannot be made fails before any session, like --model.
    const bad = workspace({ model: 'openai:gpt-4o-mini' });
    const b = await dsh(bad.dir, ['run', 'go'], bad.env);
    expect(b.code).toBe(1);
    expect(b.err).toMatch(/OPENAI_API_KEY/);
    expect(existsSync(join(bad.dir, '.dsh'))).toBe(false);
  }, HANG);

  it('maxInlineBytes and timeouts.bashMs reach the runtime and the bash tool', async () => {
    const { dir, env } = workspace({ maxInlineBytes: 256, timeouts: { bashMs: 1000 } });
    writeFileSync(join(dir, 'notes.txt'), Array.from({ length: 30 }, (_, i) => `TODO: item ${i} of the list\n`).join(''));
    const script = join(dir, 'script.json');
    writeFileSync(
      script,
      JSON.stringify([
        { toolCalls: [{ toolName: 'grep', input: { pattern: 'TODO' } }] },
        { toolCalls: [{ toolName: 'bash', input: { command: 'sleep 60' } }] },
        { text: 'done' },
      ]),
    );
    const r = await dsh(dir, ['run', 'go', '--model', `scripted:${script}`, '--allow', 'bash'], env);
    expect(r.code, r.err).toBe(0);
    const events = await eventsOf(dir);
    // The grep result (over 256 bytes) was spilled; the default limit (16 KiB) would keep it inline.
    expect(events.some((e) => e.type === 'tool/spilled')).toBe(true);
    const { out, reasons } = outcomes(events);
    expect(out.bash).toBe('TIMEOUT');
    expect(reasons.bash).toContain('within 1000 ms');
  }, HANG);
});
