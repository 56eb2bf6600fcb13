/**
 * Bash deny patterns, matched against every command of a shell parse of the line, decided twice:
 * before anyone is asked (the command rules' pre-execute listener: POLICY_DENIED, no question), and
 * as the guard, the irrevocable last line after any approval (GUARD_DENIED). Each case runs both.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { applyConfig } from '../../../src/runtime/policies/applyConfig.js';
import { bashDenyCheck, bashDenyGuard } from '../../../src/runtime/policies/bashDenyGuard.js';
import { commandSpellings } from '../../../src/runtime/policies/commandRules.js';
import { call, fakeBash, recordingApproval } from './fixtures.js';

function setup(deny: string[]) {
  const bash = fakeBash();
  const rt = createRuntime({ tools: [bash.tool] });
  applyConfig(rt, { bash: { deny } });
  return { rt, bash };
}

/** The guard alone (what stands after an approval, or after a listener that allowed): it denies the same commands. */
async function guardAlone(deny: string[], command: string) {
  const bash = fakeBash();
  const rt = createRuntime({ tools: [bash.tool] });
  rt.tools.guard(bashDenyGuard({ patterns: deny }), 'dsh:bash-deny');
  const r = await call(rt, 'bash', { command });
  expect(r.error?.code, command).toBe('GUARD_DENIED');
  expect(bash.ran).toEqual([]);
  return r;
}

describe('bash deny guard', () => {
  it('a matching command is denied before any question (POLICY_DENIED naming the pattern, with an actionable reason), and by the guard alone; the body never runs', async () => {
    const { rt, bash } = setup(['^rm\\s+-[a-zA-Z]*r', '^git push']);
    const r = await call(rt, 'bash', { command: 'rm -rf build' });
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.decision).toMatchObject({ stage: 'pre-execute', outcome: 'deny', rule: 'bash.deny[0] /^rm\\s+-[a-zA-Z]*r/' });
    expect((await guardAlone(['^rm\\s+-[a-zA-Z]*r'], 'rm -rf build')).content).toContain('deny pattern /^rm\\s+-[a-zA-Z]*r/');
    expect(r.content).toContain('deny pattern /^rm\\s+-[a-zA-Z]*r/');
    expect(r.content).toContain('Do not rerun it in another spelling');
    expect(bash.ran).toEqual([]);
    expect((await call(rt, 'bash', { command: 'ls -la' })).isError).toBe(false);
    expect((await call(rt, 'bash', { command: 'echo rm -rf is dangerous' })).isError).toBe(false);
    expect(bash.ran).toEqual(['ls -la', 'echo rm -rf is dangerous']);
  });

  it.each([
    'true; rm -rf build',
    'ls && rm -rf build',
    'ls || rm -rf build',
    'ls | rm -rf build',
    'echo $(rm -rf build)',
    'echo `rm -rf build`',
    // Backquotes nested two and three deep, bash's escaping (the third level is one mvdan-sh 0.10.1 misreads).
    'echo `echo \\`rm -rf build\\``',
    'echo `echo \\`echo \\\\\\`rm -rf build\\\\\\`\\``',
    'echo "`echo \\"x\\"; rm -rf build`"',
    '(rm -rf build)',
    '{ rm -rf build; }',
    'ls\nrm -rf build',
    "r''m -rf build",
    '"rm" -rf build',
    '\\rm -rf build',
    'rm     -rf build',
    'rm\t-rf build',
    '/bin/rm -rf build',
    './rm -rf build',
    'sudo rm -rf build',
    'env FOO=1 /usr/bin/rm -rf build',
    'X=1 rm -rf build',
    'nohup rm -rf build &',
    'command rm -rf build',
    'rm \\\n -rf build',
  ])('catches the respelling %j', async (command) => {
    const { rt, bash } = setup(['^rm -[a-zA-Z]*r']);
    const r = await call(rt, 'bash', { command });
    expect(r.error?.code, JSON.stringify(commandSpellings(command))).toBe('POLICY_DENIED');
    expect(bash.ran).toEqual([]);
    await guardAlone(['^rm -[a-zA-Z]*r'], command);
  });

  it.each([
    'x=rm; $x -rf build',
    'eval "$(echo cm0gLXJmIGJ1aWxk | base64 -d)"',
    "printf 'r\\x6d -rf build' | sh",
    '/bin/r? -rf build',
    'bash ./s.sh',
    // env (and sudo) set any NAME=value, and bash imports BASH_FUNC_ls%% as a function `ls`: this runs `rm -rf build`.
    "env 'BASH_FUNC_ls%%=() { rm -rf build; }' bash -c ls",
    "sudo 'BASH_FUNC_ls%%=() { rm -rf build; }' bash -c ls",
    // find replaces {} with each file name, even as the command: this runs /usr/bin/rm -rf build.
    'find /usr/bin -name rm -exec {} -rf build \\;',
    // xargs hands its input to sh -c: as the string itself, or through the replace string.
    "printf 'rm -rf build' | xargs -0 sh -c",
    "echo 'rm -rf build' | xargs -I{} sh -c '{}'",
  ])(
    'a line the parse cannot fully see (%j) is not let through silently: it is asked about (denied here, with no approver)',
    async (command) => {
      const { rt, bash } = setup(['^rm -[a-zA-Z]*r']);
      const r = await call(rt, 'bash', { command });
      expect(r.error?.code).toBe('APPROVAL_DENIED');
      expect(bash.ran).toEqual([]);
    },
  );

  it('text that only looks like a command is not one: quoted arguments and comments are not denied', async () => {
    const { rt, bash } = setup(['^rm\\s']);
    for (const command of ['git commit -m "fix; rm -r v"', "echo 'a && rm -r v'", 'grep -e "rm -r" notes.txt # rm -r v']) {
      const r = await call(rt, 'bash', { command });
      expect(r.isError, `${command}: ${r.content}`).toBe(false);
    }
    expect(bash.ran).toHaveLength(3);
  });

  it.each(['ls; rm -r v (', 'echo `[[ -n x ]]`', `echo ${'a '.repeat(5000)}`])(
    'a line that does not parse (%#) is denied without a question (and by the guard alone): the patterns cannot be checked against it',
    async (command) => {
      const bash = fakeBash();
      const approval = recordingApproval('allowed-once');
      const rt = createRuntime({ tools: [bash.tool], approval: approval.service });
      applyConfig(rt, { bash: { deny: ['^rm\\s'] } });
      rt.hooks.on('tools/pre-execute', 'ask-everything', () => ({ kind: 'ask' }));
      const r = await call(rt, 'bash', { command });
      expect(r.error?.code).toBe('POLICY_DENIED');
      expect(r.content).toMatch(/cannot be checked against the deny patterns/);
      expect(approval.asked).toEqual([]);
      expect(bash.ran).toEqual([]);
      expect((await guardAlone(['^rm\\s'], command)).content).toMatch(/cannot be checked against the deny patterns/);
    },
  );

  it('matching is linear: a pattern that backtracks catastrophically in RegExp answers at once in RE2', () => {
    const guard = bashDenyGuard({ patterns: ['^(a+)+$'] });
    const command = `${'a'.repeat(8_000)}!`; // under MAX_PARSED_COMMAND_LENGTH: parsed, then matched
    // JavaScript's RegExp would run for longer than the universe; the bound only catches a hang.
    const t = Date.now();
    expect(guard({ callId: 'c', toolName: 'bash', args: { command }, rawInput: {}, index: 0, executionMode: 'exclusive', idempotent: false })).toBeUndefined();
    expect(Date.now() - t).toBeLessThan(60_000);
  });

  it('only the named tool is checked, and an invalid pattern is refused when the guard is made', () => {
    const guard = bashDenyGuard({ patterns: ['rm'] });
    expect(guard({ callId: 'c', toolName: 'read', args: { command: 'rm' }, rawInput: {}, index: 0, executionMode: 'parallel', idempotent: true })).toBeUndefined();
    expect(() => bashDenyGuard({ patterns: ['(?=x)'] })).toThrow(/invalid RE2 pattern "\(\?=x\)"/);
  });
});

const viewOf = (command: unknown, toolName = 'bash') => ({ callId: 'c', toolName, args: { command }, rawInput: {}, index: 0, executionMode: 'exclusive' as const, idempotent: false });

describe('the deny check: which pattern, from where, and what it says', () => {
  it('names the pattern that matched, its index, and the spelling it matched in', () => {
    const check = bashDenyCheck(['^git\\s+push', '^rm\\s']);
    expect(check('ls && nice -n 5 rm -r v')).toEqual({
      reason: 'the command matches the deny pattern /^rm\\s/ of the configuration (in "rm -r v"). Do not rerun it in another spelling; find another way that does not need it, or ask the user.',
      rule: 'bash.deny[1] /^rm\\s/',
    });
  });

  it('the first pattern in the list that matches is the one named', () => {
    expect(bashDenyCheck(['^rm\\s', 'rm'])('rm -r v')?.rule).toBe('bash.deny[0] /^rm\\s/');
    expect(bashDenyCheck(['nothing', 'rm', '^rm\\s'])('rm -r v')?.rule).toBe('bash.deny[1] /rm/');
  });

  it('a pattern from a file names that file; one without a file, or a plain string, names the configuration', () => {
    expect(bashDenyCheck([{ pattern: '^rm\\s', from: '/home/u/.dsh/config.json' }])('rm -r v')?.reason).toContain('/^rm\\s/ of /home/u/.dsh/config.json (in');
    expect(bashDenyCheck([{ pattern: '^rm\\s' }])('rm -r v')?.reason).toContain('/^rm\\s/ of the configuration (in');
    expect(bashDenyCheck(['^rm\\s'])('rm -r v')?.reason).toContain('/^rm\\s/ of the configuration (in');
  });

  it('the spelling quoted in the reason is cut to 200 characters', () => {
    const command = `rm ${'v'.repeat(300)}`;
    const reason = bashDenyCheck(['^rm\\s'])(command)!.reason;
    expect(reason).toContain(`(in "${command.slice(0, 200)}")`);
    expect(reason).not.toContain(command.slice(0, 201));
  });

  it('a line that does not parse is refused with the parse\'s reason, under a rule of its own', () => {
    expect(bashDenyCheck(['^rm\\s'])('echo $(')).toEqual({
      reason:
        'the command cannot be checked against the deny patterns of the configuration: it does not parse as bash: 1:6: reached EOF without matching ( with ). ' +
        'Rewrite it as plain bash the rules can read (fix the syntax, split it into shorter commands, use $(…) instead of backquotes).',
      rule: 'bash.deny: a command that does not parse',
    });
  });

  it('with no patterns nothing is refused, not even a line that does not parse', () => {
    expect(bashDenyCheck([])('echo $(')).toBeUndefined();
    expect(bashDenyGuard({ patterns: [] })(viewOf('rm -r v && echo $('))).toBeUndefined();
  });

  it('a line no pattern matches passes', () => {
    expect(bashDenyCheck(['^rm\\s', '^git push'])('ls -la && git status')).toBeUndefined();
  });

  it('an invalid pattern is refused with RE2\'s own reason', () => {
    expect(() => bashDenyCheck(['a(b'])).toThrow(/^invalid RE2 pattern "a\(b": .+/);
  });
});

describe('the deny guard checks one tool\'s command argument', () => {
  it('the bash tool by default; another tool when named', () => {
    expect(bashDenyGuard({ patterns: ['^rm\\s'] })(viewOf('rm -r v'))).toMatchObject({ rule: 'bash.deny[0] /^rm\\s/' });
    const sh = bashDenyGuard({ patterns: ['^rm\\s'], tool: 'sh' });
    expect(sh(viewOf('rm -r v', 'sh'))).toMatchObject({ rule: 'bash.deny[0] /^rm\\s/' });
    expect(sh(viewOf('rm -r v', 'bash'))).toBeUndefined();
  });

  it('a call without a string command is not its to judge (the tool\'s own input check refuses it)', () => {
    const guard = bashDenyGuard({ patterns: ['.*'] });
    expect(guard(viewOf(42))).toBeUndefined();
    expect(guard(viewOf(undefined))).toBeUndefined();
    expect(guard({ ...viewOf('x'), args: null })).toBeUndefined();
  });
});
