/**
 * What `applyConfig` installs and `runtimeOptionsFromConfig` sets (docs/config.md, SPEC §2.2):
 * - the runtime options a config names, and nothing it does not name;
 * - the pre-execute order it fixes (guard hooks first, then plan mode, the bash command rules, the
 *   permission rules, the pre-execute hooks, and only then the caller's listeners), read through
 *   the `rt.hooks.order` it calls;
 * - each hook's deadline capped by `timeouts.hookMs` (docs/hooks.md), as the runner is asked;
 * - a config with hooks and no runner refused; the remover takes the listeners away and leaves the
 *   guards (guards are append-only).
 */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { applyConfig, POLICY_NAMES, runtimeOptionsFromConfig } from '../../../src/runtime/policies/applyConfig.js';
import { DEFAULT_COMMAND_HOOK_TIMEOUT_MS, type HookRunRequest, type HookRunner } from '../../../src/runtime/policies/commandHooks.js';
import { call, fakeBash, pathTool, recordingApproval } from './fixtures.js';

/** A hook runner that records every request and answers `next` (exit 0, the hook protocol's JSON). */
function recordingRunner() {
  const requests: HookRunRequest[] = [];
  const runner: HookRunner = async (request) => {
    requests.push(request);
    return { kind: 'exited', code: 0, stdout: JSON.stringify({ version: 1, decision: 'next' }), stderr: '' };
  };
  return { runner, requests };
}

/** A runtime whose `hooks.order` calls are recorded: the pre-execute order applyConfig fixes (the runtime keeps it, unread from outside). */
function orderedRuntime(rt: ReturnType<typeof createRuntime>) {
  const orders: Array<readonly string[]> = [];
  const port = {
    hooks: {
      on: rt.hooks.on,
      order: (hook: Parameters<typeof rt.hooks.order>[0], names: readonly string[]) => {
        expect(hook).toBe('tools/pre-execute');
        orders.push(names);
        rt.hooks.order(hook, names);
      },
    },
    tools: rt.tools,
  };
  return { port, orders };
}

describe('runtimeOptionsFromConfig', () => {
  it('sets nothing for a config that names nothing', () => {
    expect(runtimeOptionsFromConfig({})).toStrictEqual({});
    expect(runtimeOptionsFromConfig({ timeouts: {} })).toStrictEqual({});
    expect(runtimeOptionsFromConfig({ plan: true, askBefore: ['write'], bash: { deny: ['^rm'] } })).toStrictEqual({});
  });

  it('maps every option the config names to the runtime option of the same meaning', () => {
    expect(
      runtimeOptionsFromConfig({
        concurrency: 3,
        maxInlineBytes: 4096,
        maxMessageBytes: 1000,
        context: { maxChars: 50_000, summarize: 'digest' },
        timeouts: { hookMs: 1500, approvalMs: 60_000, abortGraceMs: 250 },
      }),
    ).toStrictEqual({
      concurrency: 3,
      maxInlineBytes: 4096,
      messageLimits: { maxMessageBytes: 1000 },
      contextWindow: { maxChars: 50_000 },
      limits: { hookTimeoutMs: 1500, approvalTimeoutMs: 60_000, abortGraceMs: 250 },
    });
  });

  it('keeps a zero and sets only the timeouts named', () => {
    expect(runtimeOptionsFromConfig({ concurrency: 0, maxInlineBytes: 0, maxMessageBytes: 0 })).toStrictEqual({ concurrency: 0, maxInlineBytes: 0, messageLimits: { maxMessageBytes: 0 } });
    expect(runtimeOptionsFromConfig({ timeouts: { approvalMs: 5 } })).toStrictEqual({ limits: { approvalTimeoutMs: 5 } });
    expect(runtimeOptionsFromConfig({ timeouts: { abortGraceMs: 0 } })).toStrictEqual({ limits: { abortGraceMs: 0 } });
    expect(runtimeOptionsFromConfig({ timeouts: { hookMs: 7 } })).toStrictEqual({ limits: { hookTimeoutMs: 7 } });
  });
});

describe('applyConfig', () => {
  it('installs nothing and orders nothing for a config without policies', async () => {
    const bash = fakeBash();
    const rt = createRuntime({ tools: [bash.tool] });
    const { port, orders } = orderedRuntime(rt);
    applyConfig(port, {});
    applyConfig(port, { bash: { deny: [], allow: [] }, permissions: [], hooks: { preExecute: [], guard: [], postExecute: undefined } });
    expect(orders).toEqual([]);
    // No guard either: the call goes from validating straight to its body.
    const stages: string[] = [];
    rt.onStage((e) => void (e.type === 'stage/entered' && stages.push(e.stage)));
    expect((await call(rt, 'bash', { command: 'x=rm; $x -r v' })).isError).toBe(false);
    expect(stages).toEqual(['validating', 'executing', 'finalizing']);
    expect(bash.ran).toEqual(['x=rm; $x -r v']);
  });

  it('puts guard hooks first, then plan mode, the command rules, the permissions and the pre-execute hooks (the caller’s listeners after them)', () => {
    const rt = createRuntime({ tools: [fakeBash().tool] });
    const { port, orders } = orderedRuntime(rt);
    const { runner } = recordingRunner();
    applyConfig(
      port,
      {
        permissions: [{ tool: 'bash', decision: 'allow' }],
        bash: { allow: ['^ls'] },
        hooks: { preExecute: [{ command: ['pre.sh'] }], guard: [{ command: ['guard.sh'] }] },
      },
      { plan: true, hookRunner: runner },
    );
    expect(orders).toEqual([['dsh:hook guard[0] guard.sh', POLICY_NAMES.planMode, POLICY_NAMES.bashCommands, POLICY_NAMES.permissions, 'dsh:hook preExecute[0] pre.sh']]);
  });

  it('a permission allow does not pass a bash line the command rules cannot see: it is asked about', async () => {
    const bash = fakeBash();
    const approval = recordingApproval('denied');
    const rt = createRuntime({ tools: [bash.tool], approval: approval.service });
    applyConfig(rt, { permissions: [{ tool: 'bash', decision: 'allow' }], bash: { allow: ['^ls\\b'] } });
    const r = await call(rt, 'bash', { command: 'x=ls; $x' });
    expect(approval.asked).toHaveLength(1);
    expect(r.error?.code).toBe('APPROVAL_DENIED');
    expect(bash.ran).toEqual([]);
    expect((await call(rt, 'bash', { command: 'ls -la' })).isError).toBe(false);
    expect(bash.ran).toEqual(['ls -la']);
  });

  it('allow patterns alone install no deny guard: an uncovered line is asked about, not denied', async () => {
    const bash = fakeBash();
    const approval = recordingApproval('allowed-once');
    const rt = createRuntime({ tools: [bash.tool], approval: approval.service });
    applyConfig(rt, { bash: { allow: [{ pattern: '^ls\\b', examples: { allow: ['ls'] } }] } });
    const r = await call(rt, 'bash', { command: 'rm -r v' });
    expect(r.isError, r.content).toBe(false);
    expect(approval.asked).toHaveLength(1);
    expect(bash.ran).toEqual(['rm -r v']);
  });

  it('deny patterns written with examples deny as plain ones do, before any question', async () => {
    const bash = fakeBash();
    const approval = recordingApproval('allowed-once');
    const rt = createRuntime({ tools: [bash.tool], approval: approval.service });
    applyConfig(rt, { bash: { deny: [{ pattern: '^rm\\s', examples: { deny: ['rm -r v'] } }] } });
    const r = await call(rt, 'bash', { command: 'ls; rm -r v' });
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(approval.asked).toEqual([]);
    expect(bash.ran).toEqual([]);
  });

  it('refuses a config with hooks and no runner, naming what is missing', () => {
    const rt = createRuntime();
    expect(() => applyConfig(rt, { hooks: { postExecute: [{ command: ['p.sh'] }] } })).toThrow(new TypeError('applyConfig: the config has command hooks but no hookRunner was given to run them'));
  });

  it('caps each hook’s deadline by timeouts.hookMs, and gives the default when neither is set', async () => {
    const w = pathTool('write');
    for (const [config, entryMs, expected] of [
      [{ hookMs: 2000 }, 5000, 2000],
      [{ hookMs: 2000 }, 500, 500],
      [{ hookMs: 60_000 }, undefined, DEFAULT_COMMAND_HOOK_TIMEOUT_MS],
      [undefined, undefined, DEFAULT_COMMAND_HOOK_TIMEOUT_MS],
      [undefined, 45_000, DEFAULT_COMMAND_HOOK_TIMEOUT_MS],
    ] as const) {
      const rt = createRuntime({ tools: [w.tool] });
      const { runner, requests } = recordingRunner();
      applyConfig(rt, { ...(config ? { timeouts: config } : {}), hooks: { preExecute: [{ command: ['pre.sh'], ...(entryMs !== undefined ? { timeoutMs: entryMs } : {}) }] } }, { hookRunner: runner });
      await call(rt, 'write', { path: 'a' });
      expect(requests.map((r) => r.timeoutMs), JSON.stringify({ config, entryMs })).toEqual([expected]);
    }
  });

  it('gives hooks the session id and turns absolute paths under the root into workspace paths', async () => {
    const w = pathTool('write');
    const rt = createRuntime({ tools: [w.tool] });
    const { runner, requests } = recordingRunner();
    applyConfig(rt, { hooks: { preExecute: [{ command: ['pre.sh'], paths: 'src/**' }] } }, { hookRunner: runner, root: '/ws', sessionId: 's-1' });
    await call(rt, 'write', { path: '/ws/src/a.ts' });
    await call(rt, 'write', { path: '/ws/lib/a.ts' });
    // A path out of the workspace is the hook's to judge: it is consulted.
    await call(rt, 'write', { path: '/elsewhere/lib/a.ts' });
    expect(requests.map((r) => JSON.parse(r.stdin) as { sessionId?: string; args?: { path?: string } }).map((i) => [i.sessionId, i.args?.path])).toEqual([
      ['s-1', '/ws/src/a.ts'],
      ['s-1', '/elsewhere/lib/a.ts'],
    ]);
  });

  it('the remover takes its listeners away and leaves the deny guard (guards are append-only)', async () => {
    const bash = fakeBash();
    const approval = recordingApproval('allowed-once');
    const rt = createRuntime({ tools: [bash.tool], approval: approval.service });
    const { runner, requests } = recordingRunner();
    const off = applyConfig(rt, { plan: true, permissions: [{ tool: '*', decision: 'ask' }], bash: { deny: ['^rm\\s'] }, hooks: { preExecute: [{ command: ['pre.sh'] }] } }, { hookRunner: runner });
    off();
    expect((await call(rt, 'bash', { command: 'ls' })).isError).toBe(false);
    expect(approval.asked).toEqual([]);
    expect(requests).toEqual([]);
    // The listener that denied before any question is gone; the guard still denies, after it.
    const r = await call(rt, 'bash', { command: 'rm -r v' });
    expect(r.error?.code).toBe('GUARD_DENIED');
    expect(r.content).toContain('/^rm\\s/');
    expect(bash.ran).toEqual(['ls']);
  });
});
