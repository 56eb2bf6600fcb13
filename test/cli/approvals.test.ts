// The keystroke approval of `dsh run`, on a stand-in for stdin: one key answers, other keys are
// ignored, Ctrl-C denies and interrupts, questions are asked one at a time, an abort denies.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { deniedWithoutTerminal, keystrokeApproval } from '../../src/cli/run/approvals.js';
import type { PendingApproval } from '../../src/cli/view/runView.js';

function setup() {
  const input = new PassThrough() as unknown as NodeJS.ReadStream;
  const shown: Array<PendingApproval | undefined> = [];
  let interrupts = 0;
  const service = keystrokeApproval({ input, show: (a) => shown.push(a), onInterrupt: () => interrupts++ });
  const key = (k: string) => (input as unknown as PassThrough).write(k);
  return { service, shown, key, interrupts: () => interrupts };
}

const req = (callId: string) => ({ callId, toolName: 'edit', args: { path: 'a.txt', oldString: 'x', newString: 'y' }, reason: 'changes a file' });

describe('keystroke approval', () => {
  it('y, a and n answer once, always and deny; other keys are ignored; one question at a time', async () => {
    const { service, shown, key } = setup();
    const first = service.request(req('c1'), new AbortController().signal);
    const second = service.request(req('c2'), new AbortController().signal);
    await new Promise((r) => setTimeout(r, 10));
    expect(shown).toEqual([{ callId: 'c1', toolName: 'edit', args: 'a.txt', reason: 'changes a file' }]);
    key('xq');
    key('a');
    expect(await first).toBe('allowed-always');
    await new Promise((r) => setTimeout(r, 10));
    expect(shown.at(-1)).toMatchObject({ callId: 'c2' });
    key('n');
    expect(await second).toBe('denied');
    const third = service.request(req('c3'), new AbortController().signal);
    await new Promise((r) => setTimeout(r, 10));
    key('y');
    expect(await third).toBe('allowed-once');
    expect(shown.at(-1)).toBeUndefined();
  });

  it('Ctrl-C denies and interrupts; an aborted question is denied without a key', async () => {
    const { service, key, interrupts } = setup();
    const asked = service.request(req('c1'), new AbortController().signal);
    await new Promise((r) => setTimeout(r, 10));
    key('\x03');
    expect(await asked).toBe('denied');
    expect(interrupts()).toBe(1);
    const ac = new AbortController();
    const aborted = service.request(req('c2'), ac.signal);
    await new Promise((r) => setTimeout(r, 10));
    ac.abort();
    expect(await aborted).toBe('denied');
  });

  it('r asks for a reason: typed (backspace edits), Enter sends it as the denial; an arrow key in it is not an answer', async () => {
    const { service, shown, key } = setup();
    const preview = { kind: 'diff' as const, text: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y' };
    const asked = service.request({ ...req('c1'), preview }, new AbortController().signal);
    await new Promise((r) => setTimeout(r, 10));
    expect(shown.at(-1)).toMatchObject({ callId: 'c1', preview });
    key('r');
    expect(shown.at(-1)).toMatchObject({ denyReason: '' });
    key('use tabz');
    key('\x7f');
    key('s');
    // An arrow key (ESC [ A) while typing: ignored whole (its `A` is not "allow always").
    key('\x1b[A');
    expect(shown.at(-1)).toMatchObject({ denyReason: 'use tabs' });
    key(' please\r');
    expect(await asked).toEqual({ answer: 'denied', reason: 'use tabs please' });
    // Esc alone goes back to the question; an empty reason is a plain denial.
    const second = service.request(req('c2'), new AbortController().signal);
    await new Promise((r) => setTimeout(r, 10));
    key('r');
    key('\x1b');
    expect(shown.at(-1)).not.toHaveProperty('denyReason');
    key('r');
    key('\r');
    expect(await second).toBe('denied');
  });

  it('without a terminal every question is denied with a line naming the --allow that pre-approves it', async () => {
    const lines: string[] = [];
    expect(await deniedWithoutTerminal((l) => lines.push(l)).request(req('c9'), new AbortController().signal)).toBe('denied');
    expect(lines).toEqual(['dsh: denied edit a.txt (c9): no terminal to ask; pre-approve with --allow edit']);
  });
});
