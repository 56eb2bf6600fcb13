/**
 * `dsh/react` (src/react/): the hooks read the session view's values (server-rendered here with
 * react-dom/server, which goes through the same `useSyncExternalStore` path with the view's
 * snapshot); without a view they fail with a clear error. The live behaviour in a browser (clicks,
 * re-renders) is test/browser/reactApp.test.ts.
 */
import { createElement, type ReactNode } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { scriptedModel } from '../../src/adapters/model/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { SessionProvider, useApprovals, useCalls, useSession, useTurn, useTurns } from '../../src/react/index.js';
import { createApprovalInbox, createSessionView } from '../../src/view/index.js';

function session() {
  const write = defineTool({ name: 'write', input: z.object({ path: z.string() }), execute: async ({ path }) => `wrote ${path}` });
  const approvals = createApprovalInbox();
  const rt = createRuntime({ tools: [write], approval: approvals });
  rt.hooks.on('tools/pre-execute', 'ask', () => ({ kind: 'ask', reason: 'changes a file' }));
  return createSessionView(rt, { approvals });
}

async function until(cond: () => boolean) {
  for (let i = 0; i < 2_000 && !cond(); i++) await new Promise((r) => setTimeout(r, 0));
  expect(cond()).toBe(true);
}

function Page(): ReactNode {
  const { activeTurnId } = useSession();
  const turns = useTurns();
  const turn = useTurn(activeTurnId);
  const calls = useCalls(activeTurnId);
  const { approvals } = useApprovals();
  return createElement(
    'p',
    null,
    `${turns.length} turn(s); ${turn?.turnId} ${turn?.state}; calls: ${calls.map((c) => `${c.toolName} ${c.stage}`).join(', ')}; asks: ${approvals.map((a) => `${a.toolName} (${a.reason}) ${a.answerable}`).join(', ')}`,
  );
}

describe('dsh/react hooks', () => {
  it('read the turns, the calls and the pending approvals of the view they are given', async () => {
    const view = session();
    const turn = view.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'write', input: { path: 'a.md' } }] }, { text: 'ok' }]), input: 'w' });
    await until(() => view.getSnapshot().approvals[0]?.answerable === true);
    const html = renderToStaticMarkup(createElement(SessionProvider, { view }, createElement(Page)));
    expect(html).toBe('<p>1 turn(s); turn-1 running; calls: write awaitingApproval; asks: write (changes a file) true</p>');
    view.approve(view.getSnapshot().approvals[0]!.id);
    await turn.done;
    await until(() => view.getSnapshot().turns[0]?.state === 'ended');
    expect(renderToStaticMarkup(createElement(SessionProvider, { view }, createElement(Page)))).toBe('<p>1 turn(s); undefined undefined; calls: ; asks: </p>');
  });

  it('throw a clear error without a SessionProvider or a view', () => {
    expect(() => renderToStaticMarkup(createElement(Page))).toThrow(/no session view/);
  });
});
