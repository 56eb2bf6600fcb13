/**
 * The examples of deciding hooks (docs/hooks.md "Examples are checked at load"), with a scripted
 * {@link HookRunner} standing for the hook process: each example is one run of the hook as a call
 * would be (the same input JSON, the entry's deadline); an `allow` example must not be denied, a
 * `deny` example must be; an example the hook's `tools`/`paths` do not match fails a `deny`; a
 * hook that fails on an example (`HOOK_FAILED`) fails it either way. A failure names the hook, the
 * example (short JSON) and what the hook gave, in one line.
 */
import { describe, expect, it } from 'vitest';
import type { HookRunner, HookRunOutcome, HookRunRequest } from '../../../src/runtime/policies/commandHooks.js';
import { checkHookExamples, countHookExamples, describeExampleFailure } from '../../../src/runtime/policies/hookExamples.js';

const exited = (code: number | null, stdout = '', stderr = ''): HookRunOutcome => ({ kind: 'exited', code, stdout, stderr });
const answer = (o: Record<string, unknown>): HookRunOutcome => exited(0, JSON.stringify({ version: 1, ...o }));

/** A hook that denies a bash call whose command contains `rm `, and otherwise answers `otherwise`. */
function noRm(otherwise: HookRunOutcome = answer({ decision: 'next' })) {
  const runs: Array<{ input: Record<string, unknown>; timeoutMs: number; argv: readonly string[] }> = [];
  const runner: HookRunner = async (req: HookRunRequest) => {
    const input = JSON.parse(req.stdin) as { args?: { command?: string } } & Record<string, unknown>;
    runs.push({ input, timeoutMs: req.timeoutMs, argv: req.argv });
    return input.args?.command?.includes('rm ') ? answer({ decision: 'deny', reason: 'no rm' }) : otherwise;
  };
  return { runner, runs };
}

const bash = (command: string) => ({ tool: 'bash', args: { command } });
const HOOK = ['.dsh/hooks/no-rm.sh'];

describe('checkHookExamples', () => {
  it('examples the hook meets give no failure, in either stage', async () => {
    const { runner, runs } = noRm();
    const examples = { allow: [bash('ls')], deny: [bash('rm -rf /')] };
    expect(await checkHookExamples({ hooks: { preExecute: [{ command: HOOK, examples }], guard: [{ command: HOOK, examples }] } }, runner)).toEqual([]);
    expect(runs.map((r) => r.input.stage)).toEqual(['preExecute', 'preExecute', 'guard', 'guard']);
  });

  it('a config without hooks, or hooks without examples, has nothing to check', async () => {
    const { runner, runs } = noRm();
    expect(await checkHookExamples({}, runner)).toEqual([]);
    expect(await checkHookExamples({ hooks: { preExecute: [{ command: HOOK }], guard: [{ command: HOOK, examples: {} }] } }, runner)).toEqual([]);
    expect(runs).toEqual([]);
  });

  it('each example is one run with the input a call gets and the entry\'s deadline (default 30 s)', async () => {
    const { runner, runs } = noRm();
    await checkHookExamples(
      { hooks: { guard: [{ command: [...HOOK, '--strict'], examples: { allow: [bash('ls')], deny: [bash('rm x')] } }, { command: ['/opt/other'], timeoutMs: 5_000, examples: { allow: [bash('pwd')] } }] } },
      runner,
    );
    expect(runs).toEqual([
      { argv: ['.dsh/hooks/no-rm.sh', '--strict'], timeoutMs: 30_000, input: { version: 1, stage: 'guard', hook: 'hooks.guard[0] (.dsh/hooks/no-rm.sh)', tool: 'bash', args: { command: 'ls' }, callId: 'example-0' } },
      { argv: ['.dsh/hooks/no-rm.sh', '--strict'], timeoutMs: 30_000, input: { version: 1, stage: 'guard', hook: 'hooks.guard[0] (.dsh/hooks/no-rm.sh)', tool: 'bash', args: { command: 'rm x' }, callId: 'example-1' } },
      { argv: ['/opt/other'], timeoutMs: 5_000, input: { version: 1, stage: 'guard', hook: 'hooks.guard[1] (/opt/other)', tool: 'bash', args: { command: 'pwd' }, callId: 'example-0' } },
    ]);
  });

  it('an allow example denied, a deny example let through (next, or ask, or a preExecute allow) are failures saying what the hook gave', async () => {
    const next = noRm();
    const ask = noRm(answer({ decision: 'ask', reason: 'hmm' }));
    const allow = noRm(answer({ decision: 'allow' }));
    const config = { hooks: { preExecute: [{ command: HOOK, examples: { allow: [bash('rm build')], deny: [bash('ls')] } }] } };
    const rule = 'hooks.preExecute[0] (.dsh/hooks/no-rm.sh)';
    expect(await checkHookExamples(config, next.runner)).toEqual([
      { rule, example: '{"tool":"bash","args":{"command":"rm build"}}', expected: 'allow', got: 'deny: no rm' },
      { rule, example: '{"tool":"bash","args":{"command":"ls"}}', expected: 'deny', got: 'next' },
    ]);
    expect((await checkHookExamples(config, ask.runner)).map((f) => f.got)).toEqual(['deny: no rm', 'ask']);
    expect((await checkHookExamples(config, allow.runner)).map((f) => f.got)).toEqual(['deny: no rm', 'allow']);
  });

  it('an allow example that asks or allows holds (it is not denied)', async () => {
    const config = { hooks: { preExecute: [{ command: HOOK, examples: { allow: [bash('ls')] } }] } };
    expect(await checkHookExamples(config, noRm(answer({ decision: 'ask' })).runner)).toEqual([]);
    expect(await checkHookExamples(config, noRm(answer({ decision: 'allow' })).runner)).toEqual([]);
  });

  it('a guard hook that answers allow fails (HOOK_FAILED: a guard cannot allow), as in a call', async () => {
    const config = { hooks: { guard: [{ command: HOOK, examples: { allow: [bash('ls')] } }] } };
    const [f] = await checkHookExamples(config, noRm(answer({ decision: 'allow' })).runner);
    expect(f).toMatchObject({ rule: 'hooks.guard[0] (.dsh/hooks/no-rm.sh)', expected: 'allow' });
    expect(f!.got).toMatch(/^HOOK_FAILED: answered an invalid guard answer/);
  });

  it('exit 2 is a deny with stderr as the reason: a deny example holds, an allow example fails with it', async () => {
    const runner: HookRunner = async () => exited(2, '', 'blocked by policy');
    const config = { hooks: { guard: [{ command: HOOK, examples: { allow: [bash('ls')], deny: [bash('rm x')] } }] } };
    expect(await checkHookExamples(config, runner)).toEqual([
      { rule: 'hooks.guard[0] (.dsh/hooks/no-rm.sh)', example: '{"tool":"bash","args":{"command":"ls"}}', expected: 'allow', got: 'deny: blocked by policy' },
    ]);
  });

  it('a hook that fails on an example fails it either way, saying why (HOOK_FAILED)', async () => {
    const crash: HookRunner = async () => exited(7, '', 'segfault');
    const hang: HookRunner = async () => ({ kind: 'timeout', stdout: '', stderr: '' });
    const config = { hooks: { preExecute: [{ command: HOOK, timeoutMs: 2_500, examples: { allow: [bash('ls')], deny: [bash('rm x')] } }] } };
    expect((await checkHookExamples(config, crash)).map((f) => [f.expected, f.got])).toEqual([
      ['allow', 'HOOK_FAILED: exited with code 7: segfault'],
      ['deny', 'HOOK_FAILED: exited with code 7: segfault'],
    ]);
    expect((await checkHookExamples(config, hang)).map((f) => f.got)).toEqual([
      'HOOK_FAILED: TIMEOUT: no answer within 2500 ms (the hook and every process it started were killed)',
      'HOOK_FAILED: TIMEOUT: no answer within 2500 ms (the hook and every process it started were killed)',
    ]);
  });

  it('an example the hook\'s tools/paths do not match: a deny example fails (the hook never sees it), an allow example holds; the hook is not run', async () => {
    const { runner, runs } = noRm();
    const config = { hooks: { guard: [{ command: HOOK, tools: 'write', paths: 'secrets/**', examples: { allow: [bash('rm a')], deny: [bash('rm b'), { tool: 'write', args: { path: 'src/a.ts' } }] } }] } };
    expect(await checkHookExamples(config, runner, '/ws')).toEqual([
      { rule: 'hooks.guard[0] (.dsh/hooks/no-rm.sh)', example: '{"tool":"bash","args":{"command":"rm b"}}', expected: 'deny', got: "not consulted (the hook's tools/paths do not match this call)" },
      { rule: 'hooks.guard[0] (.dsh/hooks/no-rm.sh)', example: '{"tool":"write","args":{"path":"src/a.ts"}}', expected: 'deny', got: "not consulted (the hook's tools/paths do not match this call)" },
    ]);
    expect(runs).toEqual([]);
  });

  it('paths match an absolute path under the root given', async () => {
    const { runner, runs } = noRm(answer({ decision: 'deny', reason: 'secret' }));
    const config = { hooks: { preExecute: [{ command: HOOK, paths: 'secrets/**', examples: { deny: [{ tool: 'write', args: { path: '/ws/secrets/key' } }] } }] } };
    expect(await checkHookExamples(config, runner, '/ws')).toEqual([]);
    expect(runs).toHaveLength(1);
  });

  it('a long example and a long reason are cut to 200 characters', async () => {
    const reason = 'r'.repeat(500);
    const runner: HookRunner = async () => answer({ decision: 'deny', reason });
    const call = bash('x'.repeat(500));
    const [f] = await checkHookExamples({ hooks: { preExecute: [{ command: HOOK, examples: { allow: [call] } }] } }, runner);
    expect(f!.example).toBe(`${JSON.stringify(call).slice(0, 199)}…`);
    expect(f!.got).toBe(`deny: ${'r'.repeat(199)}…`);
    const exact = bash('y'.repeat(200 - '{"tool":"bash","args":{"command":""}}'.length));
    const [g] = await checkHookExamples({ hooks: { preExecute: [{ command: HOOK, examples: { allow: [exact] } }] } }, async () => answer({ decision: 'deny', reason: 'z'.repeat(200) }));
    expect(g!.example).toBe(JSON.stringify(exact));
    expect(g!.got).toBe(`deny: ${'z'.repeat(200)}`);
  });

  it('a long failure message is cut to 200 characters too', async () => {
    const runner: HookRunner = async () => exited(1, '', 'e'.repeat(290));
    const [f] = await checkHookExamples({ hooks: { guard: [{ command: HOOK, examples: { deny: [bash('rm x')] } }] } }, runner);
    expect(f!.got).toBe(`HOOK_FAILED: ${`exited with code 1: ${'e'.repeat(290)}`.slice(0, 199)}…`);
  });

  it('a runner that cannot start the hook fails the example (HOOK_FAILED), it does not throw', async () => {
    const runner: HookRunner = async () => {
      throw new Error('spawn EACCES');
    };
    const [f] = await checkHookExamples({ hooks: { guard: [{ command: HOOK, examples: { deny: [bash('rm x')] } }] } }, runner);
    expect(f!.got).toBe('HOOK_FAILED: could not be started: spawn EACCES');
  });
});

describe('countHookExamples and describeExampleFailure', () => {
  it('counts the allow and deny examples of the preExecute and guard hooks', () => {
    expect(countHookExamples({})).toBe(0);
    expect(countHookExamples({ hooks: {} })).toBe(0);
    expect(
      countHookExamples({
        hooks: {
          preExecute: [{ command: HOOK, examples: { allow: [bash('a'), bash('b')] } }, { command: HOOK }],
          guard: [{ command: HOOK, examples: { deny: [bash('c')] } }, { command: HOOK, examples: { allow: [bash('d')], deny: [bash('e'), bash('f')] } }],
        },
      }),
    ).toBe(6);
  });

  it('one line naming the hook, the example and what the hook gave', () => {
    expect(describeExampleFailure({ rule: 'hooks.guard[0] (x)', example: '{"tool":"bash","args":{"command":"git push -n"}}', expected: 'deny', got: 'next' })).toBe(
      'hooks.guard[0] (x): the example {"tool":"bash","args":{"command":"git push -n"}} must be denied, but the hook gave next',
    );
    expect(describeExampleFailure({ rule: 'hooks.preExecute[1] (y)', example: '{}', expected: 'allow', got: 'deny: no' })).toBe(
      'hooks.preExecute[1] (y): the example {} must be let through (not denied), but the hook gave deny: no',
    );
  });
});
