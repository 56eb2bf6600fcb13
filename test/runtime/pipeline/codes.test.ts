/**
 * One session in which every error code of SPEC §6 that a single call can end with is produced,
 * each as a structured result (SPEC §5), and the session log that records them is well-formed.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ErrorCode, LogEventSchema, errorNameFor, type ApprovalAnswer, type LogEventOf, type ToolResult } from '../../../src/protocol/index.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { timeout } from '../../../src/runtime/wrappers/timeout.js';
import { flushMicrotasks, setup } from './harness.js';

/** Codes a single call cannot end with in this pipeline, and where each one is produced instead. */
const NOT_FROM_A_SINGLE_CALL: Partial<Record<ErrorCode, string>> = {
  FS_STALE_VERSION: 'the file tools (fs/write-intent, fs/edit-intent guards)',
  FS_OUTSIDE_WORKSPACE: 'the file tools',
  FS_NOT_FOUND: 'the file tools',
  FS_PROTECTED: 'the file tools (protected paths)',
  INTERRUPTED: 'resuming a crashed session',
  TRUNCATED_CALL: 'streaming dispatch of a cut-off model message',
  DUPLICATE_CALL_ID: 'a batch holding two calls with one callId',
};

describe('every single-call error code, in one session', () => {
  it('each arises as a structured result with its stable code, and the log pairs every call with its result', async () => {
    const act = defineTool({
      name: 'act',
      input: z.object({ mode: z.string() }),
      output: z.string(),
      execute: ({ mode }, exec) => {
        if (mode === 'fail') throw new Error('the body failed');
        if (mode === 'bad-output') return 42 as unknown as string;
        if (mode === 'timeout') return new Promise<string>(() => {});
        if (mode === 'hang') return new Promise<string>((_res, rej) => exec.signal.addEventListener('abort', () => rej(exec.signal.reason)));
        return `ok:${mode}`;
      },
    });
    const pendingApprovals: Array<(a: ApprovalAnswer) => void> = [];
    const { rt, clock, call } = setup({
      tools: [act],
      approval: {
        request: ({ args }) => {
          const mode = (args as { mode: string }).mode;
          if (mode === 'ask-deny') return Promise.resolve('denied');
          if (mode === 'ask-once') return Promise.resolve('allowed-once');
          return new Promise((res) => pendingApprovals.push(res));
        },
      },
    });
    const modeOf = (args: unknown) => (args as { mode: string }).mode;
    rt.hooks.on('tools/pre-execute', 'policy', (c, next) => {
      const mode = modeOf(c.args);
      if (mode === 'deny') return { kind: 'deny', reason: 'denied by the test policy' };
      if (mode.startsWith('ask')) return { kind: 'ask', reason: mode };
      if (mode === 'hook-throw') throw new Error('the policy failed');
      return next();
    });
    rt.tools.guard((c) => (modeOf(c.args) === 'guard' ? 'guarded by the test' : undefined), 'test-guard');
    rt.hooks.on('tools/execute', 'timeout', timeout({ ms: (c) => (modeOf(c.args) === 'timeout' ? 100 : undefined) }));
    rt.hooks.on('tools/post-execute', 'dlp', (_d, c) => (modeOf(c.args) === 'block' ? { kind: 'block', feedback: 'blocked by the test' } : undefined));

    const results: ToolResult[] = [];
    const settle = async (h: ReturnType<typeof call>) => results.push(await h.result);
    await settle(call('nope', { mode: 'x' }));
    await settle(call('act', '{"mode":'));
    await settle(call('act', { mode: 'deny' }));
    await settle(call('act', { mode: 'ask-deny' }));
    await settle(call('act', { mode: 'guard' }));
    await settle(call('act', { mode: 'hook-throw' }));
    await settle(call('act', { mode: 'fail' }));
    const timedOut = call('act', { mode: 'timeout' });
    await clock.advance(100);
    await settle(timedOut);
    const running = call('act', { mode: 'hang' });
    await flushMicrotasks();
    running.cancel();
    await settle(running);
    const waiting = call('act', { mode: 'ask-wait' });
    await flushMicrotasks();
    waiting.cancel();
    await settle(waiting);
    await settle(call('act', { mode: 'block' }));
    await settle(call('act', { mode: 'bad-output' }));
    await settle(call('act', { mode: 'ask-once' }));
    await settle(call('act', { mode: 'fine' }));

    expect(results.map((r) => r.error?.code ?? r.content)).toEqual([
      ErrorCode.UNKNOWN_TOOL,
      ErrorCode.INVALID_ARGS,
      ErrorCode.POLICY_DENIED,
      ErrorCode.APPROVAL_DENIED,
      ErrorCode.GUARD_DENIED,
      ErrorCode.HOOK_FAILED,
      ErrorCode.TOOL_FAILED,
      ErrorCode.TIMEOUT,
      ErrorCode.ABORTED,
      ErrorCode.ABORTED_BEFORE_DISPATCH,
      ErrorCode.POST_EXECUTE_BLOCKED,
      ErrorCode.INVALID_OUTPUT,
      'ok:ask-once',
      'ok:fine',
    ]);

    // Every code of SPEC §6 is either produced above or accounted for elsewhere.
    const produced = new Set(results.flatMap((r) => (r.error ? [r.error.code] : [])));
    for (const code of Object.values(ErrorCode)) {
      expect(produced.has(code) || code in NOT_FROM_A_SINGLE_CALL, `${code} is neither produced by a single call nor accounted for`).toBe(true);
    }

    for (const r of results.filter((x) => x.isError)) {
      expect(r.error!.name).toBe(errorNameFor(r.error!.code));
      expect(r.error!.message.length).toBeGreaterThan(0);
      expect(r.content.length).toBeGreaterThan(0);
      expect(r.value).toBeUndefined();
    }
    const contentOf = (code: ErrorCode) => results.find((r) => r.error?.code === code)!.content;
    expect(contentOf(ErrorCode.POLICY_DENIED)).toContain('denied by the test policy');
    expect(contentOf(ErrorCode.GUARD_DENIED)).toContain('guarded by the test');
    expect(contentOf(ErrorCode.POST_EXECUTE_BLOCKED)).toBe('blocked by the test');
    expect(contentOf(ErrorCode.HOOK_FAILED)).toContain('policy');

    // The session log: every event parses, seq counts up from 1, every call has exactly one
    // result after it, and each result points back at its call.
    const events = rt.log.events();
    expect(events.map((e) => e.seq)).toEqual(events.map((_e, i) => i + 1));
    for (const e of events) expect(LogEventSchema.safeParse(e).success).toBe(true);
    const calls = events.filter((e): e is LogEventOf<'tool/call'> => e.type === 'tool/call');
    const logged = events.filter((e): e is LogEventOf<'tool/result'> => e.type === 'tool/result');
    expect(calls).toHaveLength(results.length);
    expect(logged.map((e) => e.result)).toEqual(results);
    for (const [i, res] of logged.entries()) {
      expect(res.sourceEventSeqs).toEqual([calls[i]!.seq]);
      expect(calls[i]!.callId).toBe(res.callId);
      expect(calls[i]!.seq).toBeLessThan(res.seq);
    }
  });
});
