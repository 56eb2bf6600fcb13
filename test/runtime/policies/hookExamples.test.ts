// The examples of deciding hooks (issue 26): each one is run against the real hook, and the ones
// it does not meet come back naming the hook, the example, what was expected and what it gave.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHookRunner } from '../../../src/adapters/hooks/hookRunner.js';
import { probeBwrap } from '../../../src/adapters/sandbox/bwrapProbe.js';
import { createSandbox } from '../../../src/adapters/sandbox/sandbox.js';
import { checkHookExamples, describeExampleFailure } from '../../../src/runtime/policies/hookExamples.js';

const probe = await probeBwrap();
const skip = !probe.ok && process.env.CI === undefined;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function workspace(): { root: string; runner: ReturnType<typeof createHookRunner> } {
  const root = mkdtempSync(join('/var/tmp', 'dsh-hookex-'));
  dirs.push(root);
  mkdirSync(join(root, '.dsh', 'hooks'), { recursive: true });
  const script = [
    '#!/bin/sh',
    'input=$(cat)',
    'case "$input" in',
    `  *'"rm '*) echo '{"version":1,"decision":"deny","reason":"no rm"}' ;;`,
    `  *'"crash'*) exit 7 ;;`,
    `  *) echo '{"version":1,"decision":"next"}' ;;`,
    'esac',
    '',
  ].join('\n');
  writeFileSync(join(root, '.dsh', 'hooks', 'no-rm.sh'), script);
  chmodSync(join(root, '.dsh', 'hooks', 'no-rm.sh'), 0o755);
  return { root, runner: createHookRunner({ root, sandbox: createSandbox({ root }) }) };
}

const bash = (command: string) => ({ tool: 'bash', args: { command } });

describe.skipIf(skip)('checkHookExamples', () => {
  it('examples the hook meets give no failure', async () => {
    const { root, runner } = workspace();
    const config = { hooks: { guard: [{ command: ['.dsh/hooks/no-rm.sh'], examples: { allow: [bash('ls')], deny: [bash('rm -rf /')] } }] } };
    expect(await checkHookExamples(config, runner, root)).toEqual([]);
  }, 60_000);

  it('a deny example the hook lets through, an allow example it denies, one it crashes on and one it never sees are each a failure', async () => {
    const { root, runner } = workspace();
    const config = {
      hooks: {
        preExecute: [{ command: ['.dsh/hooks/no-rm.sh'], examples: { allow: [bash('rm build')], deny: [bash('ls'), bash('crash')] } }],
        guard: [{ command: ['.dsh/hooks/no-rm.sh'], tools: 'write', examples: { deny: [bash('rm -rf /')] } }],
      },
    };
    const failures = await checkHookExamples(config, runner, root);
    expect(failures).toEqual([
      { rule: 'hooks.preExecute[0] (.dsh/hooks/no-rm.sh)', example: '{"tool":"bash","args":{"command":"rm build"}}', expected: 'allow', got: 'deny: no rm' },
      { rule: 'hooks.preExecute[0] (.dsh/hooks/no-rm.sh)', example: '{"tool":"bash","args":{"command":"ls"}}', expected: 'deny', got: 'next' },
      { rule: 'hooks.preExecute[0] (.dsh/hooks/no-rm.sh)', example: '{"tool":"bash","args":{"command":"crash"}}', expected: 'deny', got: 'HOOK_FAILED: exited with code 7' },
      { rule: 'hooks.guard[0] (.dsh/hooks/no-rm.sh)', example: '{"tool":"bash","args":{"command":"rm -rf /"}}', expected: 'deny', got: "not consulted (the hook's tools/paths do not match this call)" },
    ]);
    expect(describeExampleFailure(failures[1]!)).toBe('hooks.preExecute[0] (.dsh/hooks/no-rm.sh): the example {"tool":"bash","args":{"command":"ls"}} must be denied, but the hook gave next');
  }, 60_000);
});
