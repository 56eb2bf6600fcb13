// `dsh run` with command hooks in dsh.config.json (issue 26 item 1), as a user runs it: a real
// process, a scripted model, real hook scripts under .dsh/hooks/, no terminal (every question is
// denied unless --allow answers it). Also: what the config loader refuses, in one line.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/adapters/log/jsonlLog.js';
import { probeBwrap } from '../../src/adapters/sandbox/bwrapProbe.js';
import { mergeConfigs, parseConfig } from '../../src/config/load.js';
import { dsh, testEnv } from './spawnDsh.js';

const probe = await probeBwrap();
const skip = !probe.ok && process.env.CI === undefined;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const GUARD_SH = [
  '#!/bin/sh',
  '# guard: no rm, ever',
  'input=$(cat)',
  'case "$input" in',
  `  *'"rm '*) echo "rm is not for agents here" >&2; exit 2 ;;`,
  'esac',
  `echo '{"version":1,"decision":"next"}'`,
  '',
].join('\n');

const ECHO_OK_JS = [
  `let s = '';`,
  `process.stdin.on('data', (d) => (s += d)).on('end', () => {`,
  `  const { args } = JSON.parse(s);`,
  `  const ok = /^echo /.test(args.command);`,
  `  process.stdout.write(JSON.stringify({ version: 1, decision: ok ? 'allow' : 'next' }));`,
  `});`,
  '',
].join('\n');

const PYTHON_GUARD = [
  'import json, sys',
  'call = json.load(sys.stdin)',
  "if call['args'].get('command', '').startswith('rm '):",
  "    print(json.dumps({'version': 1, 'decision': 'deny', 'reason': 'python says: no rm'}))",
  'else:',
  "    print(json.dumps({'version': 1, 'decision': 'next'}))",
  '',
].join('\n');

const RECORD_SH = `#!/bin/sh\ncat >> results.jsonl\necho >> results.jsonl\n`;

// Denies everything once .dsh/hooks/lockdown exists (a policy that changes while a question waits).
const LOCKDOWN_SH = `#!/bin/sh\ncat >/dev/null\nif [ -e .dsh/hooks/lockdown ]; then echo 'locked down since you asked' >&2; exit 2; fi\necho '{"version":1,"decision":"next"}'\n`;

/** A workspace outside /tmp with the hooks under .dsh/hooks/ and `config` as dsh.config.json. */
function workspace(config: unknown): { dir: string; env: NodeJS.ProcessEnv; xdg: string } {
  const dir = mkdtempSync(join('/var/tmp', 'dsh-runhooks-'));
  const xdg = mkdtempSync(join('/var/tmp', 'dsh-runhooks-xdg-'));
  dirs.push(dir, xdg);
  mkdirSync(join(dir, '.dsh', 'hooks'), { recursive: true });
  mkdirSync(join(dir, 'victim'));
  writeFileSync(join(dir, 'victim', 'precious.txt'), 'keep me\n');
  for (const [name, text] of [['guard.sh', GUARD_SH], ['echo-ok.js', ECHO_OK_JS], ['record.sh', RECORD_SH], ['lockdown.sh', LOCKDOWN_SH]] as const) {
    writeFileSync(join(dir, '.dsh', 'hooks', name), text);
    chmodSync(join(dir, '.dsh', 'hooks', name), 0o755);
  }
  writeFileSync(join(dir, 'dsh.config.json'), JSON.stringify(config));
  mkdirSync(join(xdg, 'dsh'));
  return { dir, xdg, env: testEnv({ XDG_CONFIG_HOME: xdg, OPENAI_API_KEY: 'sk-never-seen-by-hooks' }) };
}

function script(xdg: string, commands: string[]): string {
  const file = join(xdg, 'script.json');
  writeFileSync(file, JSON.stringify([...commands.map((command) => ({ toolCalls: [{ toolName: 'bash', input: { command } }] })), { text: 'done' }]));
  return file;
}

const HOOKS = {
  guard: [{ command: ['.dsh/hooks/guard.sh'], tools: 'bash', examples: { allow: [{ tool: 'bash', args: { command: 'ls' } }], deny: [{ tool: 'bash', args: { command: 'rm -r victim' } }] } }],
  preExecute: [{ command: ['node', '.dsh/hooks/echo-ok.js'], tools: 'bash' }],
  result: [{ command: ['.dsh/hooks/record.sh'] }],
};

describe.skipIf(skip)('dsh run with command hooks', () => {
  it('a pre-execute hook lets echo run without a question, the guard hook denies rm even under --allow bash, the result hook sees every result', async () => {
    const { dir, xdg, env } = workspace({ hooks: HOOKS });
    const r = await dsh(dir, ['run', 'go', '--model', `scripted:${script(xdg, ['echo hi', 'touch x', 'rm -r victim'])}`], env);
    expect(r.code, r.err).toBe(0);
    const [log] = readdirSync(join(dir, '.dsh', 'sessions')).filter((n) => n.endsWith('.jsonl'));
    const events = (await readJsonlLog(join(dir, '.dsh', 'sessions', log!))).events;
    const results = events.flatMap((e) => (e.type === 'tool/result' ? [e.result] : []));
    // echo: allowed by the hook; touch: asked by the default policy (denied, no terminal); rm: the guard.
    expect(results.map((x) => (x.isError ? x.error?.code : 'ok'))).toEqual(['ok', 'APPROVAL_DENIED', 'GUARD_DENIED']);
    expect(results[2]!.content).toContain('rm is not for agents here');
    expect(results[2]!.content).toContain('hooks.guard[0] (.dsh/hooks/guard.sh)');
    expect(events.filter((e) => e.type === 'tool/approval-request')).toHaveLength(1);
    expect(existsSync(join(dir, 'victim', 'precious.txt'))).toBe(true);
    // The result observer is asynchronous: its records are there once it has run for every call.
    const seen = readFileSync(join(dir, 'results.jsonl'), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { stage: string; tool: string; sessionId: string; turnId: string; args: unknown; result: { isError: boolean } });
    expect(seen.map((s) => [s.stage, s.tool, s.args, s.result.isError])).toEqual([
      ['result', 'bash', { command: 'echo hi' }, false],
      ['result', 'bash', { command: 'touch x' }, true],
      ['result', 'bash', { command: 'rm -r victim' }, true],
    ]);
    expect(seen[0]!.sessionId).toBe(log!.replace(/\.jsonl$/, ''));
    expect(seen[0]!.turnId).toMatch(/^turn-/);
    expect(readFileSync(join(dir, 'results.jsonl'), 'utf8')).not.toContain('sk-never-seen-by-hooks');
  }, 120_000);

  it('a Python guard found through a pyenv-style shim on PATH, from a dsh started with SHLVL=0 and a noisy ~/.bashrc: dsh run and dsh policy test both get its decisions', async () => {
    const examples = { allow: [{ tool: 'bash', args: { command: 'ls' } }], deny: [{ tool: 'bash', args: { command: 'rm -r victim' } }] };
    const { dir, xdg, env } = workspace({ hooks: { guard: [{ command: ['python3', '.dsh/hooks/guard.py'], tools: 'bash', examples }] } });
    writeFileSync(join(dir, '.dsh', 'hooks', 'guard.py'), PYTHON_GUARD);
    // A pyenv layout outside the workspace: shims/python3 execs the interpreter under PYENV_ROOT.
    const pyenv = join(xdg, 'pyenv');
    mkdirSync(join(pyenv, 'shims'), { recursive: true });
    mkdirSync(join(pyenv, 'versions', '3', 'bin'), { recursive: true });
    symlinkSync('/usr/bin/python3', join(pyenv, 'versions', '3', 'bin', 'python3'));
    writeFileSync(join(pyenv, 'shims', 'python3'), '#!/usr/bin/env bash\nset -e\nexec "${PYENV_ROOT:?}/versions/3/bin/python3" "$@"\n');
    chmodSync(join(pyenv, 'shims', 'python3'), 0o755);
    const home = join(xdg, 'home');
    mkdirSync(home);
    writeFileSync(join(home, '.bashrc'), 'echo "pyenv: cannot rehash: $PYENV_ROOT/shims isn\'t writable" >&2\n');
    const shimEnv = { ...env, HOME: home, SHLVL: '0', PYENV_ROOT: pyenv, PATH: `${join(pyenv, 'shims')}:${env.PATH}` };
    const r = await dsh(dir, ['run', 'go', '--allow', 'bash', '--model', `scripted:${script(xdg, ['echo hi', 'rm -r victim'])}`], shimEnv);
    expect(r.code, r.err).toBe(0);
    const [log] = readdirSync(join(dir, '.dsh', 'sessions')).filter((n) => n.endsWith('.jsonl'));
    const results = (await readJsonlLog(join(dir, '.dsh', 'sessions', log!))).events.flatMap((e) => (e.type === 'tool/result' ? [e.result] : []));
    expect(results.map((x) => (x.isError ? x.error?.code : 'ok')), JSON.stringify(results)).toEqual(['ok', 'GUARD_DENIED']);
    expect(results[1]!.content).toContain('python says: no rm');
    expect(results[1]!.content).not.toContain('cannot rehash');
    expect(existsSync(join(dir, 'victim', 'precious.txt'))).toBe(true);
    const t = await dsh(dir, ['policy', 'test'], shimEnv);
    expect([t.code, t.out], t.err).toEqual([0, '2 of 2 examples hold\n']);
  }, 120_000);

  it('a suspended approval resumed in another process is judged by the guard hook again before it runs', async () => {
    const { dir, xdg, env } = workspace({ hooks: { guard: [{ command: ['.dsh/hooks/lockdown.sh'] }] } });
    const run = await dsh(dir, ['run', 'go', '--suspend', '--model', `scripted:${script(xdg, ['touch made.txt'])}`], env);
    expect(run.code, run.err).toBe(3);
    writeFileSync(join(dir, '.dsh', 'hooks', 'lockdown'), '');
    const [id] = readdirSync(join(dir, '.dsh', 'sessions')).filter((n) => n.endsWith('.jsonl')).map((n) => n.slice(0, -6));
    writeFileSync(join(xdg, 'script.json'), JSON.stringify([{ text: 'ok' }]));
    const resumed = await dsh(dir, ['resume', id!, '--allow', 'bash', '--model', `scripted:${join(xdg, 'script.json')}`], env);
    expect(resumed.code, resumed.err).toBe(0);
    expect(existsSync(join(dir, 'made.txt'))).toBe(false);
    const { events } = await readJsonlLog(join(dir, '.dsh', 'sessions', `${id}.jsonl`));
    const result = events.find((e) => e.type === 'tool/result');
    expect(result).toMatchObject({ result: { isError: true, error: { code: 'GUARD_DENIED' } } });
    expect((result as { result: { content: string } }).result.content).toContain('locked down since you asked (guard hook hooks.guard[0] (.dsh/hooks/lockdown.sh))');
  }, 120_000);

  it('a hook whose example fails is refused at load: one line naming the hook and the example, no session made', async () => {
    const { dir, xdg, env } = workspace({ hooks: { guard: [{ command: ['.dsh/hooks/guard.sh'], examples: { deny: [{ tool: 'bash', args: { command: 'ls victim' } }] } }] } });
    const r = await dsh(dir, ['run', 'go', '--model', `scripted:${script(xdg, ['ls'])}`], env);
    expect(r.code).toBe(1);
    expect(r.err.trim().split('\n')).toEqual([
      'dsh run: dsh.config.json: hooks.guard[0] (.dsh/hooks/guard.sh): the example {"tool":"bash","args":{"command":"ls victim"}} must be denied, but the hook gave next',
    ]);
    expect(existsSync(join(dir, '.dsh', 'sessions'))).toBe(false);
  }, 120_000);

  it('a hook script the agent could rewrite (in the workspace, outside .dsh/) is refused at load', async () => {
    const { dir, xdg, env } = workspace({ hooks: { preExecute: [{ command: ['./check.sh'] }] } });
    writeFileSync(join(dir, 'check.sh'), GUARD_SH);
    chmodSync(join(dir, 'check.sh'), 0o755);
    const r = await dsh(dir, ['run', 'go', '--model', `scripted:${script(xdg, ['ls'])}`], env);
    expect(r.code).toBe(1);
    expect(r.err.trim()).toBe('dsh run: dsh.config.json: hooks.preExecute[0] (./check.sh): "./check.sh" is inside the workspace, where the agent can change it: put hook scripts under .dsh/hooks/ (read-only to every tool and command)');
  }, 120_000);
});

describe.skipIf(skip)('dsh policy with command hooks', () => {
  it("dsh policy test lists a hook's failing example beside the rules'; dsh policy replay runs the guard hook on recorded calls (no body runs)", async () => {
    const { dir, xdg, env } = workspace({});
    // A session where rm ran, recorded before any hook.
    const run = await dsh(dir, ['run', 'go', '--allow', 'bash', '--model', `scripted:${script(xdg, ['rm -r victim'])}`], env);
    expect(run.code, run.err).toBe(0);
    expect(existsSync(join(dir, 'victim'))).toBe(false);
    mkdirSync(join(dir, 'victim'));
    writeFileSync(join(dir, 'victim', 'precious.txt'), 'keep me\n');
    writeFileSync(
      join(dir, 'dsh.config.json'),
      JSON.stringify({
        permissions: [{ tool: 'bash', decision: 'ask', examples: { ask: [{ tool: 'bash', args: { command: 'ls' } }] } }],
        hooks: {
          guard: [{ command: ['.dsh/hooks/guard.sh'], examples: { deny: [{ tool: 'bash', args: { command: 'rm -r victim' } }, { tool: 'bash', args: { command: 'ls victim' } }] } }],
          result: [{ command: ['.dsh/hooks/record.sh'] }],
        },
      }),
    );
    const test = await dsh(dir, ['policy', 'test'], env);
    expect(test.code, test.err).toBe(1);
    expect(test.out.trim().split('\n')).toEqual([
      '✗ hooks.guard[0] (.dsh/hooks/guard.sh): the example {"tool":"bash","args":{"command":"ls victim"}} must be denied, but the hook gave next',
      '2 of 3 examples hold; 1 fails',
    ]);
    const replay = await dsh(dir, ['policy', 'replay', '--allow', 'bash'], env);
    expect(replay.code, replay.out + replay.err).toBe(1);
    expect(replay.out).toMatch(/^✗ \S+ call-1-0 bash \{"command":"rm -r victim"\}: then allowed, now denied: guard deny by dsh:hook guard\[0\] \.dsh\/hooks\/guard\.sh \(hooks\.guard\[0\] \(\.dsh\/hooks\/guard\.sh\)\)$/m);
    // With a note that the hooks ran.
    expect(replay.out).toMatch(/replayed; no tool body ran, but 1 command hook \(preExecute, guard\) ran for each call, in the sandbox, as in dsh run;/);
    // No body ran, and the result hook saw none of the stand-in results.
    expect(existsSync(join(dir, 'victim', 'precious.txt'))).toBe(true);
    expect(existsSync(join(dir, 'results.jsonl'))).toBe(false);
  }, 180_000);
});

describe('the "hooks" config', () => {
  it('is validated: unknown keys, an empty command, examples on an observing stage, a bad glob are errors naming the field', () => {
    expect(() => parseConfig('{"hooks":{"pre":[]}}', 'dsh.config.json')).toThrow(/^dsh\.config\.json: hooks\.pre: unknown key/);
    expect(() => parseConfig('{"hooks":{"guard":[{"command":[]}]}}', 'dsh.config.json')).toThrow(/^dsh\.config\.json: hooks\.guard\[0\]\.command: /);
    expect(() => parseConfig('{"hooks":{"result":[{"command":["x"],"examples":{}}]}}', 'dsh.config.json')).toThrow(/^dsh\.config\.json: hooks\.result\[0\]\.examples: unknown key/);
    expect(() => parseConfig('{"hooks":{"preExecute":[{"command":["x"],"tools":""}]}}', 'dsh.config.json')).toThrow(/hooks\.preExecute\[0\]\.tools/);
    expect(() => parseConfig('{"hooks":{"preExecute":[{"command":["x"],"timeoutMs":0}]}}', 'dsh.config.json')).toThrow(/hooks\.preExecute\[0\]\.timeoutMs/);
    expect(parseConfig('{"hooks":{"postExecute":[{"command":["jq","."],"tools":"bash","timeoutMs":500}]}}', 'x').hooks).toEqual({ postExecute: [{ command: ['jq', '.'], tools: 'bash', timeoutMs: 500 }] });
  });

  it("merges stage by stage: the project's hooks first, then the user's (a project cannot drop them)", () => {
    const user = { hooks: { guard: [{ command: ['/u/guard'] }], result: [{ command: ['/u/audit'] }] } };
    const project = { hooks: { guard: [{ command: ['.dsh/hooks/guard'] }], preExecute: [{ command: ['.dsh/hooks/pre'] }] } };
    expect(mergeConfigs(user, project).hooks).toEqual({
      preExecute: [{ command: ['.dsh/hooks/pre'] }],
      guard: [{ command: ['.dsh/hooks/guard'] }, { command: ['/u/guard'] }],
      result: [{ command: ['/u/audit'] }],
    });
  });
});
