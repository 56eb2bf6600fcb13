/**
 * An approval shows what the call would do (SPEC §10.5), and a denial can say why: the preview is
 * in the `tool/approval-request` event and in what the approval service is asked; a denial's
 * reason is in the `tool/approval-answer` event and in the `APPROVAL_DENIED` result the model gets.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { createBuiltinTools } from '../../../src/adapters/tools/builtinTools.js';
import { ErrorCode } from '../../../src/protocol/index.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import type { ApprovalRequest, ApprovalService } from '../../../src/runtime/pipeline/approvalService.js';
import { MAX_PREVIEW_CHARS } from '../../../src/runtime/pipeline/approvalPreview.js';
import { tempDir } from '../../adapters/workspaceFixture.js';
import { expectError, only, setup } from './harness.js';

function recordingApproval(answer: (req: ApprovalRequest) => Awaited<ReturnType<ApprovalService['request']>>) {
  const asked: ApprovalRequest[] = [];
  const service: ApprovalService = { request: async (req) => (asked.push(req), answer(req)) };
  return { service, asked };
}

async function builtin(answer: Parameters<typeof recordingApproval>[0]) {
  const root = await tempDir();
  const { service, asked } = recordingApproval(answer);
  const { rt, call } = setup({ approval: service });
  const tools = createBuiltinTools({ root, spillStore: rt.spillStore });
  for (const t of tools.all) rt.tools.register(t);
  rt.hooks.on('tools/pre-execute', 'ask', (c, next) => (['edit', 'write', 'bash', 'shout'].includes(c.toolName) ? { kind: 'ask', reason: 'changes things' } : next()));
  return { root, rt, call, asked };
}

describe('approval previews', () => {
  it('edit: the unified diff against the file as it is now, logged and shown to the approver', async () => {
    const { root, rt, call, asked } = await builtin(() => 'allowed-once');
    await writeFile(join(root, 'a.txt'), 'one\ntwo\nthree\n');
    await call('read', { path: 'a.txt' }).result;
    const r = await call('edit', { path: 'a.txt', oldString: 'two', newString: 'TWO' }).result;
    expect(r.isError).toBe(false);
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("one\nTWO\nthree\n");
    const diff = ['--- a/a.txt', '+++ b/a.txt', '@@ -1,3 +1,3 @@', ' one', '-two', '+TWO', ' three'].join('\n');
    expect(only(rt, r.callId, 'tool/approval-request').preview).toEqual({ kind: 'diff', text: diff });
    expect(asked[0]!.preview).toEqual({ kind: 'diff', text: diff });
  });

  it('write: a new file is all additions; an edit that would fail says so instead of a diff', async () => {
    const { root, rt, call } = await builtin(() => 'denied');
    const w = await call('write', { path: 'new/b.md', content: '# b\nhello\n' }).result;
    expect(only(rt, w.callId, 'tool/approval-request').preview).toEqual({ kind: 'diff', text: '--- /dev/null\n+++ b/new/b.md\n@@ -0,0 +1,2 @@\n+# b\n+hello' });
    await writeFile(join(root, 'c.txt'), 'x\n');
    const e = await call('edit', { path: 'c.txt', oldString: 'nope', newString: 'y' }).result;
    expect(only(rt, e.callId, 'tool/approval-request').preview).toEqual({ kind: 'diff', text: 'oldString is not in c.txt: the edit would fail' });
  });

  it('a preview never counts as a read: an edit of a file the model never read still fails FS_STALE_VERSION after approval', async () => {
    const { root, rt, call } = await builtin(() => 'allowed-once');
    await writeFile(join(root, 'd.txt'), 'keep\n');
    const r = await call('edit', { path: 'd.txt', oldString: 'keep', newString: 'gone' }).result;
    expectError(rt, r, ErrorCode.FS_STALE_VERSION);
    expect(await readFile(join(root, 'd.txt'), 'utf8')).toBe('keep\n');
  });

  it('a preview cannot reach outside the workspace (a path through ..)', async () => {
    const { rt, call } = await builtin(() => 'denied');
    const r = await call('write', { path: '../../etc/passwd', content: 'x' }).result;
    const preview = only(rt, r.callId, 'tool/approval-request').preview!;
    expect(preview.kind).toBe('args');
    expect(preview.text).toMatch(/no preview of the change: .*outside/i);
    expect(preview.text).not.toMatch(/root:/);
  });

  it('bash shows its command; another tool its arguments; a huge preview is cut with a marker', async () => {
    const { rt, call } = await builtin(() => 'denied');
    rt.tools.register(defineTool({ name: 'shout', input: z.object({ text: z.string() }), execute: (a) => a.text }));
    const b = await call('bash', { command: 'rm -rf build && make' }).result;
    expect(only(rt, b.callId, 'tool/approval-request').preview).toEqual({ kind: 'command', text: 'rm -rf build && make' });
    const s = await call('shout', { text: 'hi' }).result;
    expect(only(rt, s.callId, 'tool/approval-request').preview).toEqual({ kind: 'args', text: '{\n  "text": "hi"\n}' });
    const big = await call('write', { path: 'big.txt', content: 'line\n'.repeat(10_000) }).result;
    const p = only(rt, big.callId, 'tool/approval-request').preview!;
    expect(p.truncated).toBe(true);
    expect(p.text.length).toBeLessThan(MAX_PREVIEW_CHARS + 200);
    expect(p.text).toMatch(/\n… \(preview cut: \d+ more characters, \d+ lines\)$/);
  });

  it("a denial's reason is logged with the answer and reaches the model in the result", async () => {
    const { rt, call } = await builtin((req) => (req.toolName === 'bash' ? { answer: 'denied', reason: '  use make clean, not rm  ' } : 'denied'));
    const r = await call('bash', { command: 'rm -rf build' }).result;
    expectError(rt, r, ErrorCode.APPROVAL_DENIED, 'approval denied: use make clean, not rm');
    expect(only(rt, r.callId, 'tool/approval-answer')).toMatchObject({ answer: 'denied', reason: 'use make clean, not rm' });
  });

  it('a reason that is not a non-empty string is a plain denial; nonsense still denies with a warning', async () => {
    const { rt, call } = await builtin(() => ({ answer: 'denied', reason: 42 }) as never);
    const r = await call('bash', { command: 'ls' }).result;
    expectError(rt, r, ErrorCode.APPROVAL_DENIED, /^APPROVAL_DENIED: approval denied$/);
    expect(only(rt, r.callId, 'tool/approval-answer').reason).toBeUndefined();
  });
});
