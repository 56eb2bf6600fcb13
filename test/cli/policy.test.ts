// `dsh policy test` and `dsh policy replay` (issue 26 items 2 and 3), as real processes from source
// in temp workspaces (embedded model, no key, no network, no terminal). The sessions replayed are
// real `dsh run` sessions; the replay runs no tool body (checked by the edit it replays: the file
// it would change stays as it was).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dsh, testEnv } from './spawnDsh.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function workspace(config?: unknown): { dir: string; env: NodeJS.ProcessEnv; setConfig(c: unknown): void } {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-policy-'));
  const xdg = mkdtempSync(join(tmpdir(), 'dsh-policy-xdg-'));
  dirs.push(dir, xdg);
  writeFileSync(join(dir, 'README.md'), '# app\n\nTODO: write docs\n');
  const setConfig = (c: unknown) => writeFileSync(join(dir, 'dsh.config.json'), JSON.stringify(c));
  if (config !== undefined) setConfig(config);
  return { dir, env: testEnv({ XDG_CONFIG_HOME: xdg }), setConfig };
}

const HANG = 180_000;

describe('dsh policy test', () => {
  it('reports every example that fails, naming the rule and who decided instead; exit 1; 0 when all hold', async () => {
    const { dir, env, setConfig } = workspace({
      permissions: [
        { tool: 'write', decision: 'allow', examples: { allow: [{ tool: 'write', args: { path: 'notes.md' } }] } },
        { tool: 'write', path: '.env', decision: 'deny', examples: { deny: [{ tool: 'write', args: { path: '.env' } }] } },
      ],
      // `rmdir` is not denied: in dsh run it is asked about (the default question), so its example says `ask`.
      bash: { deny: [{ pattern: '^rm\\s', examples: { deny: ['rm -rf build', 'sudo rm -r x'], ask: ['rmdir build'] } }] },
    });
    const r = await dsh(dir, ['policy', 'test'], env);
    expect(r.code, r.err).toBe(1);
    expect(r.out).toBe(
      '✗ permissions[1] (tool "write", path ".env"): example write {"path":".env"} should be denied, but: allow (pre-execute allow by dsh:permissions (permissions[0] (tool "write")))\n' +
        '4 of 5 examples hold; 1 fails\n',
    );
    // Any other command refuses the config, in one line naming the rule and the example; no session is made.
    const run = await dsh(dir, ['run', '--model', 'embedded', 'go'], env);
    expect(run.code).toBe(1);
    expect(run.err.trim().split('\n')).toHaveLength(1);
    expect(run.err).toContain('dsh run: dsh.config.json: permissions[1] (tool "write", path ".env"): example write {"path":".env"} should be denied, but: allow');
    expect(existsSync(join(dir, '.dsh'))).toBe(false);

    // The rules in the right order: every example holds.
    setConfig({
      permissions: [
        { tool: 'write', path: '.env', decision: 'deny', examples: { deny: [{ tool: 'write', args: { path: '.env' } }] } },
        { tool: 'write', decision: 'allow', examples: { allow: [{ tool: 'write', args: { path: 'notes.md' } }] } },
      ],
    });
    const ok = await dsh(dir, ['policy', 'test'], env);
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toBe('2 of 2 examples hold\n');
  }, HANG);

  it('bad usage is exit 2; a bad config is one line, exit 1', async () => {
    const { dir, env, setConfig } = workspace();
    expect((await dsh(dir, ['policy', 'frobnicate'], env)).code).toBe(2);
    expect((await dsh(dir, ['policy', 'test', '--json'], env)).code).toBe(2);
    expect((await dsh(dir, ['policy', 'replay', '--fail-on', 'sometimes'], env)).code).toBe(2);
    setConfig({ permissions: [{ tool: 'write', decision: 'deny', examples: { deny: [{ tool: 'write' }] } }] });
    const bad = await dsh(dir, ['policy', 'test'], env);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/^dsh policy: dsh\.config\.json: permissions\[0\]\.examples\.deny\[0\]\.args: .*\n$/);
  }, HANG);
});

describe('dsh policy replay', () => {
  it('reports a call that ran and would now be denied, and one denied that would now run; exit 1; no body runs', async () => {
    const { dir, env, setConfig } = workspace();
    // Session 1: edit and bash asked and allowed (they ran). Session 2: edit denied by a rule.
    expect((await dsh(dir, ['run', '--model', 'embedded', 'look around', '--allow', 'edit,bash'], env)).code).toBe(0);
    setConfig({ permissions: [{ tool: 'edit', decision: 'deny' }] });
    expect((await dsh(dir, ['run', '--model', 'embedded', 'again', '--allow', 'bash'], env)).code).toBe(0);
    const sessions = readdirSync(join(dir, '.dsh', 'sessions')).filter((n) => n.endsWith('.jsonl')).sort().map((n) => n.slice(0, -6));
    expect(sessions).toHaveLength(2);
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');

    // The new policy: `ls` is denied, edits are allowed without a question.
    setConfig({ permissions: [{ tool: 'edit', decision: 'allow' }], bash: { deny: ['^ls\\s'] } });
    const r = await dsh(dir, ['policy', 'replay'], env);
    expect(r.code, r.err).toBe(1);
    const lines = r.out.split('\n');
    // Session 1's bash ran (asked, yes); now the guard denies it.
    // Both sessions' bash ran (--allow bash: not asked); now the guard denies it.
    for (const s of sessions) {
      expect(lines).toContain(`✗ ${s} call-3-0 bash {"command":"ls -1 | head -n 20"}: then allowed, now denied: pre-execute deny by dsh:bash-commands (bash.deny[0] /^ls\\s/)`);
    }
    // Session 2's edit was denied by the old rule; now the new rule lets it run without a question.
    expect(lines.find((l) => l.startsWith(`✗ ${sessions[1]} call-2-0 edit `))).toMatch(/: then denied, now would run: pre-execute allow by dsh:permissions \(permissions\[0\] \(tool "edit"\)\)$/);
    expect(r.out).toMatch(/^allow → deny +2$/m);
    expect(r.out).toMatch(/^deny → allow +1$/m);
    expect(r.out).toMatch(/^unchanged +7$/m);
    expect(r.out).toContain('10 calls in 2 sessions replayed; no tool body ran; 3 changes to fail on (--fail-on ran-now-denied,denied-now-runs)');
    // No body ran: the edit it replayed (which would change README.md) did nothing.
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe(readme);

    // --json for CI; --fail-on narrows what fails; one session by id.
    const json = await dsh(dir, ['policy', 'replay', '--json', sessions[1]!], env);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.out) as { sessions: number; changes: Array<{ toolName: string; then: string; now: string; ran: boolean; thenDecision?: { by: string } }>; failing: number };
    expect(report.sessions).toBe(1);
    const edit = report.changes.find((c) => c.toolName === 'edit')!;
    expect(edit).toMatchObject({ then: 'deny', now: 'allow', ran: false, thenDecision: { stage: 'pre-execute', outcome: 'deny', by: 'dsh:permissions', rule: 'permissions[0] (tool "edit")' } });
    const narrow = await dsh(dir, ['policy', 'replay', '--fail-on', 'ran-now-denied', sessions[1]!], env);
    expect(narrow.code, narrow.out).toBe(1); // session 2's bash ran (--allow bash) and is now denied
    // The old policy again: nothing changed, exit 0.
    setConfig({ permissions: [{ tool: 'edit', decision: 'deny' }] });
    const same = await dsh(dir, ['policy', 'replay', sessions[1]!, '--allow', 'bash'], env);
    expect(same.code, same.out).toBe(0);
    expect(same.out).toMatch(/^unchanged +\d+$/m);
  }, HANG);

  it('a session where rm ran, replayed under a new deny pattern, is reported (exit 1); a write it replays writes nothing', async () => {
    const { dir, env, setConfig } = workspace();
    mkdirSync(join(dir, 'build'));
    writeFileSync(join(dir, 'build', 'out.js'), 'x\n');
    const script = join(dir, '..', `${dir.split('/').pop()}-script.json`);
    dirs.push(script);
    writeFileSync(
      script,
      JSON.stringify([
        { toolCalls: [{ toolName: 'bash', input: { command: 'rm -r build' } }] },
        { toolCalls: [{ toolName: 'write', input: { path: 'made-by-the-model.txt', content: 'hello\n' } }] },
        { text: 'done' },
      ]),
    );
    const run = await dsh(dir, ['run', 'clean up', '--model', `scripted:${script}`, '--allow', 'bash,write'], env);
    expect(run.code, run.err).toBe(0);
    expect(existsSync(join(dir, 'build'))).toBe(false); // rm ran
    rmSync(join(dir, 'made-by-the-model.txt')); // the write ran; remove what it made
    setConfig({ bash: { deny: ['^rm\\s'] } });
    const r = await dsh(dir, ['policy', 'replay', '--allow', 'bash,write'], env);
    expect(r.code, r.out + r.err).toBe(1);
    expect(r.out).toMatch(/^✗ \S+ call-1-0 bash \{"command":"rm -r build"\}: then allowed, now denied: pre-execute deny by dsh:bash-commands \(bash\.deny\[0\] \/\^rm\\s\/\)$/m);
    expect(r.out).toMatch(/^allow → deny +1$/m);
    expect(r.out).toMatch(/^unchanged +1$/m);
    // Neither body ran again: no file was written, nothing else was removed.
    expect(existsSync(join(dir, 'made-by-the-model.txt'))).toBe(false);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('# app\n\nTODO: write docs\n');
  }, HANG);
});
