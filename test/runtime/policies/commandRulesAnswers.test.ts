/**
 * What the bash command rules answer, word for word (docs/command-rules.md, SPEC §10.4):
 * - the question about a line the parse cannot see names what it cannot see (at most three
 *   things), and the question about a line the allow patterns do not cover names the commands
 *   they miss (at most three, each cut at 120 characters);
 * - `xargs` and `find -exec` add arguments at run time: an allow pattern anchored at its end does
 *   not cover them;
 * - only the tool the rules are for is judged; a call without a command string is handed on;
 * - what `allowed-always` remembers: the other arguments count (in any order), `timeoutMs` and the
 *   names the caller ignores do not, and a line that runs nothing is never remembered.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ApprovalAnswer } from '../../../src/protocol/index.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { applyConfig, type PolicyConfig } from '../../../src/runtime/policies/applyConfig.js';
import { compileBashPattern } from '../../../src/runtime/policies/bashDenyGuard.js';
import { parseShellCommand } from '../../../src/runtime/policies/shellCommands.js';
import { allowedByPatterns, bashCommandRules, commandApprovalKeys, commandSpellings, layerSpellings } from '../../../src/runtime/policies/commandRules.js';
import { call, fakeBash, recordingApproval } from './fixtures.js';

function setup(config: PolicyConfig, answer: ApprovalAnswer = 'denied') {
  const bash = fakeBash();
  const approval = recordingApproval(answer);
  const rt = createRuntime({ tools: [bash.tool], approval: approval.service });
  applyConfig(rt, config);
  return { rt, bash, asked: approval.asked };
}

const allow = (...patterns: string[]) => patterns.map((p) => {
  const re = compileBashPattern(p);
  return (s: string) => re.matcher(s).find();
});

/** The listener's own decision for a bash line, every later listener handing over (the chain's end allows). */
async function decide(options: Parameters<typeof bashCommandRules>[0], command: string) {
  const view = { callId: 'c', toolName: 'bash', args: { command }, rawInput: {}, index: 0, executionMode: 'exclusive' as const, idempotent: false };
  return bashCommandRules(options)(view, () => ({ kind: 'allow' }));
}

describe('the questions the command rules ask', () => {
  it('a line the parse cannot see: the reason names at most three things it cannot see, and the rule says why', async () => {
    const { rt, asked, bash } = setup({ bash: { allow: ['^ls\\b'] } });
    const r = await call(rt, 'bash', { command: 'a=1; $a; $b; $c; $d' });
    expect(r.error?.code).toBe('APPROVAL_DENIED');
    expect(asked).toHaveLength(1);
    const reason = asked[0]!.reason!;
    expect(reason).toMatch(/^the command rules cannot see everything this command runs \(.+\), so no rule allows it$/);
    expect(reason).toContain('"$a"');
    expect(reason).toContain('"$c"');
    expect(reason).not.toContain('"$d"');
    expect(reason.match(/built at run time/g)).toHaveLength(3);
    expect(reason).toMatch(/built at run time; the command name "\$b"/);
    expect(bash.ran).toEqual([]);
    // The listener's decision (a public one: dsh/policies) names its rule beside the same reason.
    expect(await decide({ allow: allow('^ls\\b') }, 'a=1; $a; $b; $c; $d')).toEqual({ kind: 'ask', reason, rule: 'bash: a command the parse cannot see' });
  });

  it('deny patterns alone also ask about a line the parse cannot see (it may run what they deny)', async () => {
    const { rt, asked } = setup({ bash: { deny: ['^rm\\s'] } }, 'allowed-once');
    expect((await call(rt, 'bash', { command: 'x=ls; $x' })).isError).toBe(false);
    expect(asked.map((a) => a.reason)).toEqual([expect.stringMatching(/^the command rules cannot see everything this command runs \(the command name "\$x" is built at run time/)]);
    // A line they see and do not deny is for the later listeners (here: none, so it runs unasked).
    expect((await call(rt, 'bash', { command: 'ls -la' })).isError).toBe(false);
    expect(asked).toHaveLength(1);
  });

  it('a line the allow patterns do not cover: the reason and the rule name at most three missed commands, each cut at 120 characters', async () => {
    const { rt, asked } = setup({ bash: { allow: ['^ls\\b'] } });
    const long = `echo ${'y'.repeat(200)}`;
    const r = await call(rt, 'bash', { command: `ls && make && ${long} && cat x && rm -r v` });
    expect(r.error?.code).toBe('APPROVAL_DENIED');
    const missed = `"make", ${JSON.stringify(long.slice(0, 120))}, "cat x"`;
    expect(asked.map((a) => a.reason)).toEqual([`not covered by the bash allow patterns: ${missed}`]);
    expect(await decide({ allow: allow('^ls\\b') }, `ls && make && ${long} && cat x && rm -r v`)).toEqual({
      kind: 'ask',
      reason: `not covered by the bash allow patterns: ${missed}`,
      rule: `bash.allow: no pattern covers ${missed}`,
    });
  });

  it('names a missed command as it finally runs, past its wrappers', async () => {
    const { rt, asked } = setup({ bash: { allow: ['^ls\\b'] } });
    await call(rt, 'bash', { command: 'nice -n 5 timeout 5 make all' });
    expect(asked.map((a) => a.reason)).toEqual(['not covered by the bash allow patterns: "make all"']);
  });

  it('a line that runs no command is not allowed by any pattern: it is asked about', async () => {
    const { rt, asked } = setup({ bash: { allow: ['.*'] } });
    expect((await call(rt, 'bash', { command: '# nothing' })).error?.code).toBe('APPROVAL_DENIED');
    expect(asked).toHaveLength(1);
  });

  it('the allow decision names its rule', async () => {
    const { rt } = setup({ bash: { allow: ['^ls\\b'] } });
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(r.isError).toBe(false);
    expect(r.decision).toMatchObject({ outcome: 'allow', rule: 'bash.allow: every command matches' });
  });
});

describe('what the patterns are tried against', () => {
  it('a deny pattern sees the line as sent, so a pattern spanning commands still denies', async () => {
    const { rt, bash } = setup({ bash: { deny: ['ls && rm'] } });
    expect((await call(rt, 'bash', { command: 'ls && rm -r v' })).error?.code).toBe('POLICY_DENIED');
    expect((await call(rt, 'bash', { command: 'ls; rm -r v' })).isError).toBe(false);
    expect(bash.ran).toEqual(['ls; rm -r v']);
  });

  it('a line of assignments only runs no command: deny patterns let it be, allow patterns do not cover it', async () => {
    const denying = setup({ bash: { deny: ['^rm\\s', '^$'] } });
    expect((await call(denying.rt, 'bash', { command: 'x=1' })).isError).toBe(false);
    const allowing = setup({ bash: { allow: ['.*'] } });
    expect((await call(allowing.rt, 'bash', { command: 'x=1' })).error?.code).toBe('APPROVAL_DENIED');
    expect(allowing.asked).toHaveLength(1);
  });

  it('the spellings of one command: its words, and its name without the directory', () => {
    const layers = (line: string) => parseShellCommand(line).commands.flatMap((c) => c.layers);
    expect(layers('ls -a').map(layerSpellings)).toEqual([['ls -a']]);
    expect(layers('/bin/rm -r v').map(layerSpellings)).toEqual([['/bin/rm -r v', 'rm -r v']]);
    expect(layers('xargs rm -r').map(layerSpellings)).toEqual([['xargs rm -r'], ['rm -r <more args at run time>']]);
    // A layer without words (one a caller builds: a parse lists no command without words) has no spelling.
    expect(layerSpellings({ ...layers('ls')[0]!, words: [], moreArgs: true })).toEqual([]);
    expect(commandSpellings('nice -n 5 /bin/rm -r v')).toEqual(['nice -n 5 /bin/rm -r v', '/bin/rm -r v', 'rm -r v']);
  });

  it('a privilege wrapper anywhere in the chain must be allowed itself, whatever its directory', async () => {
    const { rt, asked } = setup({ bash: { allow: ['^ls\\b', '^nice\\b'] } });
    for (const command of ['nice -n 5 sudo ls', '/usr/bin/sudo ls', 'nice doas ls']) {
      expect((await call(rt, 'bash', { command })).error?.code, command).toBe('APPROVAL_DENIED');
    }
    expect(asked).toHaveLength(3);
    expect(allowedByPatterns(parseShellCommand('nice -n 5 sudo ls'), allow('^ls\\b', '^sudo ls$'))).toBe(true);
  });

  it('no allow pattern covers anything, no pattern covers a line that runs nothing, and none a line the parse cannot see whole', () => {
    expect(allowedByPatterns(parseShellCommand('ls'), [])).toBe(false);
    expect(allowedByPatterns(parseShellCommand('# nothing'), allow('.*'))).toBe(false);
    expect(allowedByPatterns(parseShellCommand('x=1'), allow('.*'))).toBe(false);
    // `$x` is a command name built at run time: even a pattern that matches every word does not cover it
    expect(allowedByPatterns(parseShellCommand('ls; $x'), allow('.*'))).toBe(false);
  });
});

describe('arguments added at run time', () => {
  it.each(['xargs rm -r', 'xargs -a list rm -r', 'find . -exec rm -r {} +'])('an allow pattern anchored at its end does not cover %j', async (command) => {
    const { rt, asked, bash } = setup({ bash: { allow: ['^rm -r$', '^rm -r \\{\\} \\+$', '^find\\b', '^xargs\\b'] } });
    expect((await call(rt, 'bash', { command })).error?.code).toBe('APPROVAL_DENIED');
    expect(asked).toHaveLength(1);
    expect(bash.ran).toEqual([]);
  });

  it('an allow pattern that admits more arguments covers them', async () => {
    const { rt, asked } = setup({ bash: { allow: ['^rm -r\\b'] } });
    expect((await call(rt, 'bash', { command: 'xargs -a list rm -r' })).isError).toBe(false);
    expect(asked).toEqual([]);
  });
});

describe('which calls the rules judge', () => {
  it('only the tool they are for: another tool with a command argument is handed on', async () => {
    const sh = defineTool({ name: 'sh', input: z.object({ command: z.string() }), execute: ({ command }) => command });
    const bash = fakeBash();
    const approval = recordingApproval('denied');
    const rt = createRuntime({ tools: [sh, bash.tool], approval: approval.service });
    rt.hooks.on('tools/pre-execute', 'rules', bashCommandRules({ allow: allow('^ls\\b'), tool: 'sh' }));
    expect((await call(rt, 'sh', { command: 'ls' })).isError).toBe(false);
    expect((await call(rt, 'sh', { command: 'make' })).error?.code).toBe('APPROVAL_DENIED');
    expect((await call(rt, 'bash', { command: 'make' })).isError).toBe(false);
    expect(approval.asked.map((a) => a.toolName)).toEqual(['sh']);
  });

  it('a call whose command is no string, or that has no arguments object, is handed on', async () => {
    const loose = defineTool({ name: 'bash', input: z.any(), execute: () => 'ran' });
    const approval = recordingApproval('denied');
    const rt = createRuntime({ tools: [loose], approval: approval.service });
    rt.hooks.on('tools/pre-execute', 'rules', bashCommandRules({ allow: allow('^ls\\b'), deny: () => ({ reason: 'never', rule: 'r' }) }));
    for (const input of [{ command: 42 }, { command: ['rm', '-r'] }, {}, null, 7]) {
      expect((await call(rt, 'bash', input)).isError, JSON.stringify(input)).toBe(false);
    }
    expect(approval.asked).toEqual([]);
  });

  it('without allow patterns or a deny check, the rules ask about nothing', async () => {
    const bash = fakeBash();
    const approval = recordingApproval('denied');
    const rt = createRuntime({ tools: [bash.tool], approval: approval.service });
    rt.hooks.on('tools/pre-execute', 'rules', bashCommandRules({ allow: [] }));
    for (const command of ['x=ls; $x', 'make', 'echo $(']) expect((await call(rt, 'bash', { command })).isError, command).toBe(false);
    expect(approval.asked).toEqual([]);
  });
});

describe('what allowed-always remembers for a bash call', () => {
  it('the other arguments count, in any order; timeoutMs does not', () => {
    const key = commandApprovalKeys({ command: 'ls', cwd: 'a', env: 'b' });
    expect(key).toBeDefined();
    expect(commandApprovalKeys({ env: 'b', command: 'ls', cwd: 'a' })).toEqual(key);
    expect(commandApprovalKeys({ env: 'b', cwd: 'a', command: 'ls', timeoutMs: 5 })).toEqual(key);
    expect(commandApprovalKeys({ command: 'ls', cwd: 'a', env: 'c' })).not.toEqual(key);
    expect(commandApprovalKeys({ command: 'ls', cwd: 'a' })).not.toEqual(key);
    expect(commandApprovalKeys({ command: 'ls', timeoutMs: 5 })).toEqual(commandApprovalKeys({ command: 'ls' }));
  });

  it('the names the caller ignores do not count, and then timeoutMs does', () => {
    expect(commandApprovalKeys({ command: 'ls', note: 'x' }, ['note'])).toEqual(commandApprovalKeys({ command: 'ls' }, ['note']));
    expect(commandApprovalKeys({ command: 'ls', timeoutMs: 5 }, ['note'])).not.toEqual(commandApprovalKeys({ command: 'ls' }, ['note']));
  });

  it('a line that runs nothing, or does not parse, is never remembered', () => {
    for (const command of ['', '   ', '# a comment', 'echo $(']) expect(commandApprovalKeys({ command }), JSON.stringify(command)).toBeUndefined();
  });

  it('a line with any word built at run time is never remembered, even beside plain commands', () => {
    expect(commandApprovalKeys({ command: 'ls && ls "$dir"' })).toBeUndefined();
    expect(commandApprovalKeys({ command: 'ls "$dir" && ls' })).toBeUndefined();
  });

  it('one key per line, different for different programs', () => {
    expect(commandApprovalKeys({ command: 'ls' })).toHaveLength(1);
    expect(commandApprovalKeys({ command: 'ls' })).not.toEqual(commandApprovalKeys({ command: 'ls -a' }));
  });
});
