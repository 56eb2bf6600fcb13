// `dsh run --inspect` asks on the page and on the terminal at once: the first answer wins, the
// other asker is withdrawn; a cancelled call withdraws both and is denied.
import { describe, expect, it } from 'vitest';
import type { ApprovalAnswer } from '../../src/protocol/index.js';
import { pageOrTerminal } from '../../src/cli/inspect/pageOrTerminal.js';
import type { ApprovalService } from '../../src/runtime/pipeline/index.js';
import { createApprovalInbox } from '../../src/view/approvalInbox.js';

/** A terminal that answers when told to, and records being withdrawn. */
function fakeTerminal() {
  const asked: Array<{ callId: string; answer: (a: ApprovalAnswer) => void; signal: AbortSignal }> = [];
  const service: ApprovalService = {
    request: (req, signal) =>
      new Promise((resolve) => {
        asked.push({ callId: req.callId, answer: resolve, signal });
        signal.addEventListener('abort', () => resolve('denied'), { once: true });
      }),
  };
  return { service, asked };
}

const req = (callId: string) => ({ callId, toolName: 'bash', args: { command: 'make' }, reason: 'the model wants to run a command' });

describe('pageOrTerminal', () => {
  it("the page answers first: the terminal prompt is withdrawn, the page's answer (a deny's reason too) stands", async () => {
    const t = fakeTerminal();
    const page = createApprovalInbox();
    const answer = pageOrTerminal(page, t.service).request(req('c1'), new AbortController().signal);
    expect(page.questions()).toEqual([{ callId: 'c1', toolName: 'bash', args: { command: 'make' }, reason: 'the model wants to run a command' }]);
    expect(t.asked).toHaveLength(1);
    expect(page.answer('c1', { kind: 'deny', reason: 'not now' })).toBe(true);
    await expect(answer).resolves.toEqual({ answer: 'denied', reason: 'not now' });
    expect(t.asked[0]!.signal.aborted).toBe(true);
    expect(page.questions()).toEqual([]);
    expect(page.answer('c1', { kind: 'allow-once' })).toBe(false);
  });

  it("the terminal answers first: the page's question leaves the inbox and a late click changes nothing", async () => {
    const t = fakeTerminal();
    const page = createApprovalInbox();
    const answer = pageOrTerminal(page, t.service).request(req('c2'), new AbortController().signal);
    t.asked[0]!.answer('allowed-always');
    await expect(answer).resolves.toBe('allowed-always');
    expect(page.questions()).toEqual([]);
    expect(page.answer('c2', { kind: 'allow-once' })).toBe(false);
  });

  it('without a terminal the page alone is asked; a cancelled call denies and clears the question', async () => {
    const page = createApprovalInbox();
    const service = pageOrTerminal(page, undefined);
    const ctl = new AbortController();
    const answer = service.request(req('c3'), ctl.signal);
    expect(page.questions()).toHaveLength(1);
    ctl.abort();
    await expect(answer).resolves.toBe('denied');
    expect(page.questions()).toEqual([]);
    const aborted = new AbortController();
    aborted.abort();
    await expect(service.request(req('c4'), aborted.signal)).resolves.toBe('denied');
    expect(page.questions()).toEqual([]);
  });

  it("a terminal that fails is a deny, unless the page answered first", async () => {
    const page = createApprovalInbox();
    const broken: ApprovalService = { request: () => Promise.reject(new Error('the terminal is gone')) };
    await expect(pageOrTerminal(page, broken).request(req('c5'), new AbortController().signal)).resolves.toBe('denied');
    expect(page.questions()).toEqual([]);
  });
});
