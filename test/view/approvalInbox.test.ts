/**
 * The page's approval inbox (src/view/approvalInbox.ts) as an `ApprovalService` and as a list a
 * page renders: what each reply tells the runtime, which question an answer goes to, and that a
 * question leaves the list exactly once, whether answered or withdrawn.
 */
import { describe, expect, it } from 'vitest';
import { createApprovalInbox } from '../../src/view/approvalInbox.js';

const ask = (callId: string, reason?: string) => ({ callId, toolName: 'write', args: { path: `${callId}.txt` }, ...(reason !== undefined ? { reason } : {}) });

describe('the approval inbox', () => {
  it('starts empty; each question waits in order, frozen, with its reason only when it has one; the list is a new frozen array on each change', () => {
    const inbox = createApprovalInbox();
    const empty = inbox.questions();
    expect(empty).toStrictEqual([]);
    expect(Object.isFrozen(empty)).toBe(true);
    void inbox.request(ask('a', 'the model wants to change a file'), new AbortController().signal);
    void inbox.request(ask('b'), new AbortController().signal);
    const list = inbox.questions();
    expect(list).toStrictEqual([
      { callId: 'a', toolName: 'write', args: { path: 'a.txt' }, reason: 'the model wants to change a file' },
      { callId: 'b', toolName: 'write', args: { path: 'b.txt' } },
    ]);
    expect(Object.isFrozen(list) && Object.isFrozen(list[0])).toBe(true);
    expect(inbox.questions()).toBe(list);
    expect(empty).toStrictEqual([]);
  });

  it('each reply, as the runtime hears it: a deny keeps a reason that says something, and drops a blank one', async () => {
    const inbox = createApprovalInbox();
    const answered = async (reply: Parameters<typeof inbox.answer>[1]) => {
      const p = inbox.request(ask('x'), new AbortController().signal);
      expect(inbox.answer('x', reply)).toBe(true);
      return p;
    };
    expect(await answered({ kind: 'allow-once' })).toBe('allowed-once');
    expect(await answered({ kind: 'allow-always' })).toBe('allowed-always');
    expect(await answered({ kind: 'deny', reason: 'not on main' })).toStrictEqual({ answer: 'denied', reason: 'not on main' });
    expect(await answered({ kind: 'deny', reason: '   ' })).toBe('denied');
    expect(await answered({ kind: 'deny' })).toBe('denied');
    expect(await answered({ kind: 'suspend' })).toBe('suspend');
    expect(inbox.questions()).toStrictEqual([]);
  });

  it('an answer goes to the latest open question of its call, and only to it; none open: false', async () => {
    const inbox = createApprovalInbox();
    const first = inbox.request(ask('a'), new AbortController().signal);
    const other = inbox.request(ask('b'), new AbortController().signal);
    const second = inbox.request(ask('a', 'again'), new AbortController().signal);
    expect(inbox.answer('a', { kind: 'deny', reason: 'no' })).toBe(true);
    expect(await second).toStrictEqual({ answer: 'denied', reason: 'no' });
    expect(inbox.questions().map((q) => q.reason ?? q.callId)).toEqual(['a', 'b']);
    expect(inbox.answer('a', { kind: 'allow-once' })).toBe(true);
    expect(await first).toBe('allowed-once');
    expect(inbox.answer('a', { kind: 'allow-once' })).toBe(false);
    expect(inbox.answer('nobody', { kind: 'allow-once' })).toBe(false);
    expect(inbox.questions().map((q) => q.callId)).toEqual(['b']);
    inbox.answer('b', { kind: 'allow-once' });
    expect(await other).toBe('allowed-once');
  });

  it('a question withdrawn (its signal aborted) leaves the list and rejects with the reason; one asked with an aborted signal never shows', async () => {
    const inbox = createApprovalInbox();
    const stop = new AbortController();
    const p = inbox.request(ask('a'), stop.signal);
    stop.abort('the call was cancelled');
    await expect(p).rejects.toBe('the call was cancelled');
    expect(inbox.questions()).toStrictEqual([]);
    expect(inbox.answer('a', { kind: 'allow-once' })).toBe(false);
    const seen: number[] = [];
    inbox.subscribe(() => seen.push(inbox.questions().length));
    await expect(inbox.request(ask('b'), AbortSignal.abort('already gone'))).rejects.toBe('already gone');
    expect(seen).toEqual([]);
    expect(inbox.questions()).toStrictEqual([]);
  });

  it('listeners hear each change once (a question answered and later withdrawn is one change), until removed; one that throws stops nothing', async () => {
    const inbox = createApprovalInbox();
    const seen: number[] = [];
    inbox.subscribe(() => {
      throw new Error('a broken page');
    });
    const off = inbox.subscribe(() => seen.push(inbox.questions().length));
    const stop = new AbortController();
    const p = inbox.request(ask('a'), stop.signal);
    inbox.answer('a', { kind: 'allow-once' });
    expect(await p).toBe('allowed-once');
    stop.abort('late');
    expect(seen).toEqual([1, 0]);
    off();
    void inbox.request(ask('b'), new AbortController().signal);
    expect(seen).toEqual([1, 0]);
    expect(inbox.questions()).toHaveLength(1);
  });
});
