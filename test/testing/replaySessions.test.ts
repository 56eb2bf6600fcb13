/** replaySessions: a recorded session against today's agent, TypeScript listeners included; no body runs again. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineTool, type SessionLog } from '../../src/index.js';
import { replaySessions, scriptedModel } from '../../src/testing/index.js';

function agentTools(bodyRuns: { n: number }) {
  return [
    defineTool({ name: 'write', input: z.object({ path: z.string() }), execute: ({ path }) => (bodyRuns.n++, `wrote ${path}`) }),
    defineTool({ name: 'read', input: z.object({ path: z.string() }), readOnly: true, execute: ({ path }) => (bodyRuns.n++, `text of ${path}`) }),
  ];
}

/** Yesterday: no listener, every call ran. */
async function recorded(): Promise<SessionLog> {
  const rt = createRuntime({ tools: agentTools({ n: 0 }) });
  await rt.startTurn({
    input: 'go',
    model: scriptedModel([
      { toolCalls: [{ toolName: 'write', input: { path: '/etc/passwd' } }, { toolName: 'write', input: { path: 'notes.md' } }, { toolName: 'read', input: { path: 'a.md' } }] },
      { text: 'done' },
    ]),
  }).done;
  return rt.log;
}

describe('replaySessions', () => {
  it('reports every decision today\'s listeners would change, runs no body, and fails on a call that ran and would now be denied', async () => {
    const log = await recorded();
    const bodyRuns = { n: 0 };
    const seen: string[] = [];
    const report = await replaySessions([{ name: 'yesterday', events: log.events() }], {
      runtime: (world) => {
        const rt = createRuntime({ ...world, tools: agentTools(bodyRuns) });
        rt.hooks.on('tools/pre-execute', 'no-etc', (call) => (String((call.args as { path: string }).path).startsWith('/etc/') ? { kind: 'deny', reason: 'not under /etc' } : undefined));
        rt.hooks.on('tools/pre-execute', 'ask-writes', (call) => (call.toolName === 'write' ? { kind: 'ask', reason: 'a write' } : undefined));
        rt.hooks.on('tools/post-execute', 'sees-recorded', (draft) => void seen.push(draft.content));
        return rt;
      },
    });
    expect(bodyRuns.n).toBe(0);
    expect([report.sessions, report.calls, report.unchanged, report.failing]).toEqual([1, 3, 1, 1]);
    expect(report.changes.map((c) => [c.callId, c.then, c.now])).toEqual([
      ['call-1-0', 'allow', 'deny'],
      ['call-1-1', 'allow', 'ask'],
    ]);
    expect(report.transitions).toEqual({ 'allow → deny': 1, 'allow → ask': 1 });
    // Post-execute listeners get what the call returned then.
    expect(seen).toEqual(['wrote notes.md', 'text of a.md']);
  });

  it('today\'s agent without the listeners changes nothing', async () => {
    const log = await recorded();
    const report = await replaySessions([{ name: 's', events: log.events() }], { runtime: (world) => createRuntime({ ...world, tools: agentTools({ n: 0 }) }) });
    expect([report.calls, report.unchanged, report.changes]).toEqual([3, 3, []]);
  });
});
