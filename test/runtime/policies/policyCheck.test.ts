/**
 * The policy checker (policyCheck.ts; what `dsh policy test` and `dsh policy replay` judge calls
 * with): a call goes through a real pipeline with stand-in tools, so no tool body ever runs, and
 * the verdict is `deny` (a pre-execute listener or a guard denied, or one failed closed: the code
 * and the reason given), `ask` (someone asked; the reason of the question), `invalid` (the call
 * never reached the policies: arguments that are no JSON object, a name no tool can have), else
 * `allow`. Tools the policies know keep what the policies read (read-only for plan mode, the input
 * schema); a recorded result's content reaches post-execute listeners. Calls are checked one at a
 * time, and a check never throws on a hostile call.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ErrorCode } from '../../../src/protocol/index.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { applyConfig } from '../../../src/runtime/policies/applyConfig.js';
import { createPolicyChecker, type PolicyCheckerOptions } from '../../../src/runtime/policies/policyCheck.js';
import { errorInfo } from '../../../src/runtime/toolError.js';

async function withChecker<T>(options: PolicyCheckerOptions, f: (check: (toolName: string, input: unknown, content?: string) => ReturnType<Awaited<ReturnType<typeof createPolicyChecker>>['check']>) => Promise<T>): Promise<T> {
  const checker = await createPolicyChecker(options);
  try {
    return await f((toolName, input, content) => checker.check({ toolName, input, ...(content !== undefined ? { content } : {}) }));
  } finally {
    await checker.close();
  }
}

describe('verdicts', () => {
  it('no policy decides: allow, with nobody named', async () => {
    await withChecker({ install: () => {} }, async (check) => {
      expect(await check('write', { path: 'a' })).toEqual({ outcome: 'allow' });
    });
  });

  it('a listener allows: allow, naming it', async () => {
    await withChecker({ install: (rt) => void applyConfig(rt, { permissions: [{ tool: 'write', decision: 'allow' }] }) }, async (check) => {
      expect(await check('write', { path: 'a' })).toEqual({ outcome: 'allow', decision: { stage: 'pre-execute', outcome: 'allow', by: 'dsh:permissions', rule: 'permissions[0] (tool "write")' } });
    });
  });

  it('a deny rule: deny with POLICY_DENIED, the reason and who decided', async () => {
    await withChecker({ install: (rt) => void applyConfig(rt, { permissions: [{ tool: 'write', path: '.env', decision: 'deny', reason: 'no secrets' }] }) }, async (check) => {
      const v = await check('write', { path: '.env' });
      expect(v).toMatchObject({ outcome: 'deny', code: 'POLICY_DENIED', decision: { stage: 'pre-execute', outcome: 'deny', by: 'dsh:permissions' } });
      expect(v.reason).toContain('no secrets');
      expect(await check('write', { path: 'src/a.ts' })).toEqual({ outcome: 'allow' });
    });
  });

  it('a guard denies: deny with GUARD_DENIED', async () => {
    await withChecker({ install: (rt) => rt.tools.guard((c) => (c.toolName === 'deploy' ? { reason: 'deploys go through CI', rule: 'ci-only' } : undefined), 'ci-only') }, async (check) => {
      const v = await check('deploy', {});
      expect(v).toMatchObject({ outcome: 'deny', code: 'GUARD_DENIED', decision: { stage: 'guard', outcome: 'deny' } });
      expect(v.reason).toContain('deploys go through CI');
    });
  });

  it('a listener that throws fails closed: deny with HOOK_FAILED', async () => {
    await withChecker({ install: (rt) => void rt.hooks.on('tools/pre-execute', 'broken', () => { throw new Error('boom'); }) }, async (check) => {
      const v = await check('bash', { command: 'ls' });
      expect(v).toMatchObject({ outcome: 'deny', code: 'HOOK_FAILED', decision: { stage: 'pre-execute', outcome: 'failed', by: 'broken' } });
      expect(v.reason).toContain('boom');
    });
  });

  it('a listener asks: ask, with the question\'s reason (none when it gave none); the yes makes it run past', async () => {
    await withChecker(
      { install: (rt) => void rt.hooks.on('tools/pre-execute', 'asker', (c) => (c.toolName === 'write' ? { kind: 'ask', reason: 'look first' } : { kind: 'ask' })) },
      async (check) => {
        expect(await check('write', { path: 'a' })).toEqual({ outcome: 'ask', decision: { stage: 'approval', outcome: 'allow', by: 'the person' }, reason: 'look first' });
        const bare = await check('edit', { path: 'a' });
        expect(bare).toEqual({ outcome: 'ask', decision: { stage: 'approval', outcome: 'allow', by: 'the person' } });
        expect(bare).not.toHaveProperty('reason');
        // The question of one call is not the answer about the next.
        expect(await check('write', { path: 'b' })).toMatchObject({ outcome: 'ask', reason: 'look first' });
      },
    );
  });

  it('asked, then denied by a guard after the yes: deny', async () => {
    await withChecker(
      {
        install: (rt) => {
          rt.hooks.on('tools/pre-execute', 'asker', () => ({ kind: 'ask', reason: 'sure?' }));
          rt.tools.guard(() => ({ reason: 'never', rule: 'no' }), 'no');
        },
      },
      async (check) => {
        expect(await check('write', { path: 'a' })).toMatchObject({ outcome: 'deny', code: 'GUARD_DENIED' });
      },
    );
  });

  it('an execute-stage wrapper that refuses without naming itself is still a deny (POLICY_DENIED, GUARD_DENIED, HOOK_FAILED); another error is invalid', async () => {
    const codes = { a: ErrorCode.POLICY_DENIED, b: ErrorCode.GUARD_DENIED, c: ErrorCode.HOOK_FAILED, d: ErrorCode.TOOL_FAILED } as const;
    await withChecker(
      { install: (rt) => void rt.hooks.on('tools/execute', 'wrapper', async (call) => ({ ok: false as const, error: errorInfo(codes[call.toolName as keyof typeof codes], `refused ${call.toolName}`) })) },
      async (check) => {
        expect(await check('a', {})).toEqual({ outcome: 'deny', code: 'POLICY_DENIED', reason: 'refused a' });
        expect(await check('b', {})).toEqual({ outcome: 'deny', code: 'GUARD_DENIED', reason: 'refused b' });
        expect(await check('c', {})).toEqual({ outcome: 'deny', code: 'HOOK_FAILED', reason: 'refused c' });
        expect(await check('d', {})).toEqual({ outcome: 'invalid', code: 'TOOL_FAILED', reason: 'refused d' });
      },
    );
  });

  it('arguments that are not a JSON object never reach the policies: invalid (INVALID_ARGS)', async () => {
    let consulted = 0;
    await withChecker({ install: (rt) => void rt.hooks.on('tools/pre-execute', 'counter', () => (consulted++, { kind: 'deny', reason: 'no' })) }, async (check) => {
      expect(await check('write', '[1,2]')).toMatchObject({ outcome: 'invalid', code: 'INVALID_ARGS' });
      expect(await check('write', 'not json {')).toMatchObject({ outcome: 'invalid', code: 'INVALID_ARGS' });
      expect(await check('write', 42)).toMatchObject({ outcome: 'invalid', code: 'INVALID_ARGS' });
      expect(consulted).toBe(0);
      expect(await check('write', '{"path":"a"}')).toMatchObject({ outcome: 'deny', code: 'POLICY_DENIED' });
      expect(consulted).toBe(1);
    });
  });

  it('a recorded name no tool can have (spaces, control characters, empty): invalid (UNKNOWN_TOOL), not a throw; the checker goes on', async () => {
    await withChecker({ install: () => {} }, async (check) => {
      for (const name of ['a b', '', 'bad\u001b[2J', 'x'.repeat(300)]) {
        expect(await check(name, {}), JSON.stringify(name.slice(0, 20))).toMatchObject({ outcome: 'invalid', code: 'UNKNOWN_TOOL' });
      }
      expect(await check('fine', {})).toEqual({ outcome: 'allow' });
    });
  });
});

describe('stand-in tools', () => {
  it('no tool body runs, not even of a tool the policies registered', async () => {
    const ran: string[] = [];
    const tool = defineTool({ name: 'launch', input: z.object({ target: z.string() }), execute: ({ target }) => (ran.push(target), 'launched') });
    await withChecker({ install: (rt) => rt.tools.register(tool) }, async (check) => {
      expect(await check('launch', { target: 'prod' })).toEqual({ outcome: 'allow' });
      expect(ran).toEqual([]);
    });
  });

  it('a registered tool keeps its input schema: arguments it refuses are invalid', async () => {
    const tool = defineTool({ name: 'launch', input: z.object({ target: z.string() }), execute: () => 'x' });
    await withChecker({ install: (rt) => rt.tools.register(tool) }, async (check) => {
      expect(await check('launch', { target: 7 })).toMatchObject({ outcome: 'invalid', code: 'INVALID_ARGS' });
      expect(await check('launch', { target: 'staging' })).toEqual({ outcome: 'allow' });
    });
  });

  it('plan mode: a registered read-only tool and one named in readOnlyTools run; other tools are denied', async () => {
    const look = defineTool({ name: 'look', input: z.object({}), readOnly: true, execute: () => 'x' });
    const poke = defineTool({ name: 'poke', input: z.object({}), execute: () => 'x' });
    await withChecker(
      {
        install: (rt) => {
          rt.tools.register(look);
          rt.tools.register(poke);
          applyConfig(rt, { plan: true });
        },
        readOnlyTools: new Set(['read']),
      },
      async (check) => {
        expect(await check('look', {})).toEqual({ outcome: 'allow' });
        expect(await check('read', { path: 'a' })).toEqual({ outcome: 'allow' });
        expect(await check('poke', {})).toMatchObject({ outcome: 'deny', code: 'POLICY_DENIED' });
        expect(await check('write', { path: 'a' })).toMatchObject({ outcome: 'deny', code: 'POLICY_DENIED' });
      },
    );
  });

  it('without readOnlyTools, a tool the policies do not know is not read-only', async () => {
    await withChecker({ install: (rt) => void applyConfig(rt, { plan: true }) }, async (check) => {
      expect(await check('read', { path: 'a' })).toMatchObject({ outcome: 'deny', code: 'POLICY_DENIED' });
    });
  });

  it('a recorded result\'s content reaches post-execute listeners (empty when none was recorded)', async () => {
    const seen: string[] = [];
    await withChecker(
      {
        install: (rt) =>
          void rt.hooks.on('tools/post-execute', 'leak-check', (draft) => {
            seen.push(draft.content);
            return draft.content.includes('sk-') ? { kind: 'block', feedback: 'leaks a key' } : undefined;
          }),
      },
      async (check) => {
        expect(await check('read', { path: 'a' }, 'token sk-123')).toEqual({ outcome: 'allow', decision: { stage: 'post-execute', outcome: 'block', by: 'leak-check' } });
        expect(await check('read', { path: 'b' })).toEqual({ outcome: 'allow' });
        expect(seen).toEqual(['token sk-123', '']);
      },
    );
  });

  it('an install that is async is waited for before the first check', async () => {
    await withChecker(
      {
        install: async (rt) => {
          await new Promise((r) => setTimeout(r, 20));
          rt.hooks.on('tools/pre-execute', 'late', () => ({ kind: 'deny', reason: 'installed late' }));
        },
      },
      async (check) => {
        expect(await check('write', { path: 'a' })).toMatchObject({ outcome: 'deny', code: 'POLICY_DENIED' });
      },
    );
  });
});

describe('one call at a time', () => {
  it('checks started together are judged one after another, each with its own verdict', async () => {
    let running = 0;
    let most = 0;
    const order: string[] = [];
    await withChecker(
      {
        install: (rt) =>
          void rt.hooks.on('tools/pre-execute', 'slow', async (c) => {
            running++;
            most = Math.max(most, running);
            order.push((c.args as { path: string }).path);
            await new Promise((r) => setTimeout(r, 5));
            running--;
            return (c.args as { path: string }).path === 'b' ? { kind: 'deny', reason: 'not b' } : undefined;
          }),
      },
      async (check) => {
        const verdicts = await Promise.all(['a', 'b', 'c'].map((p) => check('write', { path: p })));
        expect(verdicts.map((v) => v.outcome)).toEqual(['allow', 'deny', 'allow']);
        expect(order).toEqual(['a', 'b', 'c']);
        expect(most).toBe(1);
      },
    );
  });

  it('a check that throws (a hostile call object) rejects alone: the next check is still judged', async () => {
    const checker = await createPolicyChecker({ install: () => {} });
    try {
      const hostile = {
        get toolName(): string {
          throw new Error('no name for you');
        },
        input: {},
      };
      const first = checker.check(hostile);
      const second = checker.check({ toolName: 'write', input: { path: 'a' } });
      await expect(first).rejects.toThrow('no name for you');
      expect(await second).toEqual({ outcome: 'allow' });
    } finally {
      await checker.close();
    }
  });
});

describe('close', () => {
  it('closing the checker closes its runtime: what the install set up is released', async () => {
    let released = false;
    const checker = await createPolicyChecker({ install: (rt) => void rt.onClose(() => void (released = true)) });
    expect(await checker.check({ toolName: 'write', input: { path: 'a' } })).toEqual({ outcome: 'allow' });
    expect(released).toBe(false);
    await checker.close();
    expect(released).toBe(true);
  });
});
