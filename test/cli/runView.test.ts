// The live view of `dsh run` as a pure projection (no terminal): fed by a real turn's log and
// XState inspection events, and by hand-made inputs for the edge cases.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/scriptedModel.js';
import { createRuntime, defineTool } from '../../src/index.js';
import { fromInspection, initialRunView, reduceRunView, renderRunView, stageOf, wrap, type RunViewInput, type RunViewState } from '../../src/cli/view/runView.js';

const feed = (inputs: RunViewInput[], width = 80, state: RunViewState = initialRunView()) => inputs.reduce((s, i) => reduceRunView(s, i, width), state);

describe('run view projection', () => {
  it("follows a real turn: each call's row goes through the toolCall machine's stages, the text streams in deltas", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = defineTool({ name: 'slow', description: 'waits', input: z.object({}), isConcurrencySafe: () => true, execute: async () => (await gate, 'ok') });
    const rt = createRuntime({ tools: [slow], approval: { request: async () => 'allowed-once' } });
    rt.hooks.on('tools/pre-execute', 'ask', () => ({ kind: 'ask', reason: 'check' }));
    let state = initialRunView();
    const seen = new Map<string, string[]>();
    const texts: string[] = [];
    rt.log.subscribe((event) => (state = reduceRunView(state, { kind: 'event', event, now: 0 })));
    const model = scriptedModel([{ text: ['Let ', 'me ', 'wait.'], toolCalls: [{ toolName: 'slow', input: {} }] }, { text: 'done' }]);
    const handle = rt.startTurn({
      model,
      input: 'go',
      inspect: (e) => {
        const input = fromInspection(e, 0);
        if (!input) return;
        if (input.kind === 'text') texts.push(input.delta);
        if (input.kind === 'stage') {
          const stages = seen.get(input.callId) ?? [];
          if (stages.at(-1) !== input.stage) stages.push(input.stage);
          seen.set(input.callId, stages);
        }
        state = reduceRunView(state, input);
        if (input.kind === 'stage' && input.stage === 'running') {
          // While the body runs, the row shows it.
          expect(renderRunView(state, { now: 1500, width: 80 }).live.join('\n')).toMatch(/^. slow \{\}  running  1\.5s$/m);
          release();
        }
      },
    });
    const out = await handle.done;
    expect(out.outcome).toBe('completed');
    expect(texts).toEqual(['Let ', 'me ', 'wait.', 'done']);
    expect(seen.get('call-1-0')).toEqual(['awaiting approval', 'running', 'settled']);
    const { stable, live } = renderRunView(state, { now: 0, width: 80 });
    expect(live).toEqual([]);
    expect(stable).toEqual(['› go', 'Let me wait.', '✓ slow {}  done  0.0s', 'done', 'turn completed']);
  });

  it('shows an error by code and message in full (wrapped, never cut), the approval question, and ignores late snapshots of finished steps', () => {
    const long = 'x'.repeat(150);
    let s = feed([
      { kind: 'stage', callId: 'c1', toolName: 'bash', input: '{"command":"make"}', stage: 'pre-execute', now: 0 },
      { kind: 'approval', approval: { callId: 'c1', toolName: 'bash', args: 'make', reason: 'runs a command' } },
    ], 60);
    let view = renderRunView(s, { now: 2000, width: 60 }).live;
    expect(view[0]).toMatch(/^⠋ bash make  pre-execute  2\.0s$/);
    expect(view).toContain('? allow bash make (runs a command)');
    expect(view.join(' ')).toMatch(/  \[y\] allow once  \[a\] allow always  \[n\] deny\s+\[r\] deny with a reason/);
    s = feed([
      { kind: 'approval', approval: undefined },
      { kind: 'stage', callId: 'c1', toolName: 'bash', input: {}, stage: 'running', now: 2100 },
      {
        kind: 'event',
        now: 3000,
        event: { seq: 3, time: 0, type: 'tool/result', callId: 'c1', toolName: 'bash', sourceEventSeqs: [1], result: { callId: 'c1', toolName: 'bash', isError: true, content: long, error: { name: 'ToolFailedError', code: 'TOOL_FAILED', message: long } } as never },
      },
    ], 60, s);
    view = renderRunView(s, { now: 9999, width: 60 }).live;
    expect(view[0]).toBe('✗ bash make  TOOL_FAILED  3.0s');
    expect(view.slice(1).join('').replace(/ /g, '')).toBe(`TOOL_FAILED:${long}`);
    expect(view.every((l) => l.length <= 60)).toBe(true);
    s = feed([{ kind: 'event', now: 3000, event: { seq: 4, time: 0, type: 'step/end', turnId: 't', stepIndex: 0, finishReason: 'tool-calls', toolCalls: 1 } }], 60, s);
    expect(renderRunView(s, { now: 0, width: 60 }).live).toEqual([]);
    s = feed([{ kind: 'stage', callId: 'c1', toolName: 'bash', input: {}, stage: 'settled', now: 3100 }], 60, s);
    expect(renderRunView(s, { now: 0, width: 60 }).live).toEqual([]);
  });

  it('a command that exited non-zero: its row says `exit N` with the last lines of its output, while a zero exit is done (issue 32 item 6)', () => {
    const result = (callId: string, exitCode: number, content: string) => ({
      kind: 'event' as const,
      now: 4300,
      event: { seq: 3, time: 0, type: 'tool/result', callId, toolName: 'bash', sourceEventSeqs: [1], result: { callId, toolName: 'bash', isError: false, content, metadata: { exitCode } } } as never,
    });
    const s = feed([
      { kind: 'stage', callId: 'c1', toolName: 'bash', input: '{"command":"ls && node test.js"}', stage: 'running', now: 0 },
      { kind: 'stage', callId: 'c2', toolName: 'bash', input: '{"command":"true"}', stage: 'running', now: 0 },
      result('c1', 1, 'a.txt\ntest.js\n[stderr]\nline 1\nline 2\nline 3\nline 4\nAssertionError: expected 2 to equal 3\n[exit code 1]'),
      result('c2', 0, '[exit code 0]'),
    ], 80);
    const view = renderRunView(s, { now: 9999, width: 80 }).live;
    expect(view).toEqual([
      '! bash ls && node test.js  exit 1  4.3s',
      '    │ line 1',
      '    │ line 2',
      '    │ line 3',
      '    │ line 4',
      '    │ AssertionError: expected 2 to equal 3',
      '✓ bash true  done  4.3s',
    ]);
  });

  it('stage names and wrapping', () => {
    expect(stageOf('aborting')).toBe('aborting');
    expect(stageOf('executing')).toBe('running');
    expect(stageOf('preExecuteWaiting')).toBe('pre-execute');
    expect(stageOf('postExecuteWaiting')).toBe('post-execute');
    expect(stageOf('awaitingApproval')).toBe('awaiting approval');
    expect(stageOf({ preExecute: 'pending' })).toBe('pre-execute');
    expect(wrap('aaaa bbbb cccc dddd', 10)).toEqual(['aaaa bbbb', 'cccc dddd']);
    expect(wrap('z'.repeat(25), 10)).toEqual(['z'.repeat(10), 'z'.repeat(10), 'z'.repeat(5)]);
  });
  it('shows the latest progress of a running call under its row (issue 15.1), and drops it once the call is done', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const job = defineTool({
      name: 'job',
      input: z.object({}),
      execute: async (_a, exec) => {
        exec.progress({ output: 'compiling a.c\ncompiling b.c\n', progress: 2, total: 5 });
        await gate;
        return 'built';
      },
    });
    const rt = createRuntime({ tools: [job] });
    let state = initialRunView();
    rt.log.subscribe((event) => (state = reduceRunView(state, { kind: 'event', event, now: 0 })));
    const handle = rt.runCall({ callId: 'j1', toolName: 'job', input: '{}' });
    for (let i = 0; i < 100 && !rt.log.events().some((e) => e.type === 'tool/progress'); i++) await new Promise((r) => setImmediate(r));
    const live = renderRunView(state, { now: 0, width: 80 }).live;
    const row = live.findIndex((l) => l.includes('job'));
    expect(row).toBeGreaterThanOrEqual(0);
    expect(live[row + 1]).toBe('    ⋯ 2/5 · compiling b.c');
    release();
    await handle.result;
    expect(renderRunView(state, { now: 0, width: 80 }).live.join('\n')).not.toContain('⋯');
  });

  it('shows what the user types while a turn runs, and a steering message once it is logged', () => {
    const state = feed([
      { kind: 'input', text: 'also check c' },
      { kind: 'event', event: { seq: 1, time: 0, type: 'user/steer', turnId: 't', stepIndex: 1, text: 'also check c' }, now: 0 },
      { kind: 'input', text: undefined },
    ]);
    const typing = feed([{ kind: 'input', text: 'also' }]);
    expect(renderRunView(typing, { now: 0, width: 80 }).live).toEqual(['steer› also']);
    expect(renderRunView(state, { now: 0, width: 80 })).toEqual({ stable: ['› also check c  (steering)'], live: [] });
  });

  it('a preview under the question: painted by line kind, bounded to the lines the terminal can redraw', async () => {
    const { previewLines, ansiPaint } = await import('../../src/cli/view/runView.js');
    const preview = { kind: 'diff' as const, text: ['--- a/x', '+++ b/x', '@@ -1,2 +1,2 @@', ' keep', '-old', '+new'].join('\n') };
    expect(previewLines(preview, 80, 40)).toEqual(['  --- a/x', '  +++ b/x', '  @@ -1,2 +1,2 @@', '   keep', '  -old', '  +new']);
    const painted = previewLines(preview, 80, 40, ansiPaint);
    expect(painted[4]).toBe('\x1b[31m  -old\x1b[39m');
    expect(painted[5]).toBe('\x1b[32m  +new\x1b[39m');
    const cut = previewLines(preview, 80, 3);
    expect(cut).toEqual(['  --- a/x', '  +++ b/x', '  @@ -1,2 +1,2 @@', '  … 3 more line(s) of the preview (dsh log has them all)']);
  });
});
