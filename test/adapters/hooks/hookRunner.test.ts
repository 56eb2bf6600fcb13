// The Node runner of command hooks: stdin in, exit code and output out, in the bash sandbox.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHookRunner, hookCommandProblem, resolveHookProgram } from '../../../src/adapters/hooks/hookRunner.js';
import { probeBwrap } from '../../../src/adapters/sandbox/bwrapProbe.js';
import { createSandbox } from '../../../src/adapters/sandbox/sandbox.js';

const probe = await probeBwrap();
const skip = !probe.ok && process.env.CI === undefined;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function workspace(): string {
  const root = mkdtempSync(join('/var/tmp', 'dsh-hookrun-'));
  dirs.push(root);
  mkdirSync(join(root, '.dsh', 'hooks'), { recursive: true });
  return root;
}

function script(root: string, rel: string, text: string): void {
  writeFileSync(join(root, rel), text);
  chmodSync(join(root, rel), 0o755);
}

describe('resolveHookProgram and hookCommandProblem', () => {
  it('a program with a slash is taken from the root; a bare name is left for PATH', () => {
    expect(resolveHookProgram('/w', '.dsh/hooks/x.sh')).toBe('/w/.dsh/hooks/x.sh');
    expect(resolveHookProgram('/w', './x')).toBe('/w/x');
    expect(resolveHookProgram('/w', '/usr/bin/jq')).toBe('/usr/bin/jq');
    expect(resolveHookProgram('/w', 'node')).toBe('node');
  });

  it('refuses a hook script the agent could rewrite (in the workspace, outside .dsh/), and a program that does not exist', () => {
    const root = workspace();
    script(root, 'check.sh', '#!/bin/sh\n');
    script(root, '.dsh/hooks/check.sh', '#!/bin/sh\n');
    expect(hookCommandProblem(root, ['./check.sh'])).toMatch(/"\.\/check\.sh" is inside the workspace, where the agent can change it: put hook scripts under \.dsh\/hooks\//);
    expect(hookCommandProblem(root, ['node', 'check.sh'])).toMatch(/"check\.sh" is inside the workspace/);
    expect(hookCommandProblem(root, ['check.sh'])).toBeUndefined(); // a program without a slash is looked up on PATH
    expect(hookCommandProblem(root, ['node', './check.sh'])).toMatch(/inside the workspace/);
    expect(hookCommandProblem(root, ['.dsh/hooks/check.sh'])).toBeUndefined();
    expect(hookCommandProblem(root, ['node', '.dsh/hooks/check.sh'])).toBeUndefined();
    expect(hookCommandProblem(root, ['.dsh/hooks/missing.sh'])).toMatch(/does not exist/);
    expect(hookCommandProblem(root, ['/bin/sh', '-c', 'exit 0'])).toBeUndefined();
  });
});

describe.skipIf(skip)('createHookRunner', () => {
  it('gives the hook its stdin, runs it in the workspace, and returns its exit code, stdout and stderr', async () => {
    const root = workspace();
    script(root, '.dsh/hooks/echo.sh', '#!/bin/sh\nread line\necho "got $line in $(pwd)"\necho "to stderr" >&2\nexit 3\n');
    const run = createHookRunner({ root, sandbox: createSandbox({ root }) });
    const r = await run({ argv: ['.dsh/hooks/echo.sh'], stdin: '{"a":1}\n', timeoutMs: 30_000 });
    expect(r).toEqual({ kind: 'exited', code: 3, signal: null, stdout: `got {"a":1} in ${root}\n`, stderr: 'to stderr\n' });
  }, 60_000);

  it('passes arguments as they are (no shell reads them)', async () => {
    const root = workspace();
    const run = createHookRunner({ root, sandbox: createSandbox({ root }) });
    const r = await run({ argv: ['/bin/sh', '-c', 'printf "%s|" "$@"', 'x', "it's $HOME", '`id`'], stdin: '', timeoutMs: 30_000 });
    expect(r).toMatchObject({ kind: 'exited', code: 0, stdout: "it's $HOME|`id`|" });
  }, 60_000);

  it('cannot change the protected paths (the hook runs in the bash sandbox)', async () => {
    const root = workspace();
    writeFileSync(join(root, 'dsh.config.json'), '{}');
    const run = createHookRunner({ root, sandbox: createSandbox({ root }) });
    const r = await run({ argv: ['/bin/sh', '-c', 'echo "{\\"plan\\":false}" > dsh.config.json; echo $?'], stdin: '', timeoutMs: 30_000 });
    expect(r.kind).toBe('exited');
    expect((r as { stdout: string }).stdout.trim()).not.toBe('0');
  }, 60_000);
});
