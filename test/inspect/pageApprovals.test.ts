// Questions asked on the page and on the terminal at once: the first answer wins, the other
// asker is withdrawn; an abort (the turn cancelled) denies and clears the question.
import { describe, expect, it } from 'vitest';
import type { ApprovalAnswer } from '../../src/protocol/index.js';
import { pageApprovals } from '../../src/cli/inspect/pageApprovals.js';
import type { ApprovalService } from '../../src/runtime/pipeline/index.js';

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

describe('pageApprovals', () => {
  it('the page answers first: the terminal prompt is withdrawn, the page\'s answer stands', async () => {
    const t = fakeTerminal();
    const a = pageApprovals(t.service);
    const changes: number[] = [];
    a.onChange((p) => changes.push(p.length));
    const answer = a.service.request(req('c1'), new AbortController().signal);
    expect(a.pending()).toEqual([{ callId: 'c1', toolName: 'bash', args: 'make', reason: 'the model wants to run a command' }]);
    expect(t.asked).toHaveLength(1);
    expect(a.answer('c1', 'allowed-always')).toBe(true);
    await expect(answer).resolves.toBe('allowed-always');
    expect(t.asked[0]!.signal.aborted).toBe(true);
    expect(a.pending()).toEqual([]);
    expect(changes).toEqual([1, 0]);
    expect(a.answer('c1', 'denied')).toBe(false);
  });

  it('the terminal answers first: the page\'s question is gone and a late click changes nothing', async () => {
    const t = fakeTerminal();
    const a = pageApprovals(t.service);
    const answer = a.service.request(req('c2'), new AbortController().signal);
    t.asked[0]!.answer('denied');
    await expect(answer).resolves.toBe('denied');
    expect(a.pending()).toEqual([]);
    expect(a.answer('c2', 'allowed-once')).toBe(false);
  });

  it('without a terminal the page alone is asked; a cancelled turn denies and clears the question', async () => {
    const a = pageApprovals(undefined);
    const ctl = new AbortController();
    const answer = a.service.request(req('c3'), ctl.signal);
    expect(a.pending()).toHaveLength(1);
    ctl.abort();
    await expect(answer).resolves.toBe('denied');
    expect(a.pending()).toEqual([]);
    const aborted = new AbortController();
    aborted.abort();
    await expect(a.service.request(req('c4'), aborted.signal)).resolves.toBe('denied');
    expect(a.pending()).toEqual([]);
  });
});
