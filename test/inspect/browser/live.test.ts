// `dsh run --inspect` in real headless Chromium: the page follows a running session (log events
// and live actor states over SSE); a call's highlighted state changes as it runs, and its question
// is answered by a click on the page (no terminal: the page is the only one asked). No console errors.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../../src/adapters/log/jsonlLog.js';
import { startDsh, waitFor } from '../../cli/spawnDsh.js';
import { startLoopbackServer } from '../../model/wire/loopbackServer.js';
import { openAiChatReply } from '../../model/wire/openaiChat.js';
import { launch, openPage, screenshot } from './chromium.js';
import { workDir } from './sessions.js';

const HANG = 180_000;
let browser: Browser;

beforeAll(async () => {
  browser = await launch();
}, HANG);
afterAll(async () => {
  await browser?.close();
});

describe('dsh run --inspect (Chromium)', () => {
  it('highlights a running call\'s state as it changes, and answers its question by a click', async () => {
    const dir = workDir();
    const script = join(dir, 'script.json');
    writeFileSync(
      script,
      JSON.stringify([
        { text: 'Reading, then a command.', toolCalls: [{ toolName: 'read', input: { path: 'a.txt' } }, { toolName: 'bash', input: { command: 'echo approved-from-the-page' } }] },
        { text: 'Done.' },
      ]),
    );
    const run = startDsh(dir, ['run', 'go', '--inspect', '--model', `scripted:${script}`]);
    const url = await waitFor(() => /inspector at (http:\/\/127\.0\.0\.1:\d+\/\?t=\S+)/.exec(run.out())?.[1], 'the inspector URL');
    const { page, errors } = await openPage(browser, url);
    // Live once the server says the log can still grow (its `session` frame, after the backlog).
    await page.waitForSelector('[data-testid=mode]:has-text("live")');

    // The bash call waits for an answer: the page shows the question, the call in awaitingApproval.
    const bash = 'call-1-1';
    await page.waitForSelector(`[data-testid=question][data-call-id="${bash}"]`);
    await page.click(`[data-testid=call-row][data-key="${bash}"]`);
    await page.waitForSelector(`[data-testid=detail][data-key="${bash}"]`);
    await page.waitForSelector('[data-testid=diagram][data-machine=toolCall] g.current[data-state=awaitingApproval]');
    expect(await page.textContent('[data-testid=detail-state]')).toBe('awaitingApproval');
    // The live actor states (XState inspection over SSE) reached the page.
    await page.waitForSelector('[data-testid=live-stages] li[data-state=awaitingApproval]');
    await screenshot(page, 'live-awaiting-approval');

    await page.click(`[data-testid=question][data-call-id="${bash}"] [data-testid=approve-once]`);
    // The highlight moves on: the call ran and settled, the question is gone, the turn ended.
    await page.waitForSelector('[data-testid=diagram][data-machine=toolCall] g.current[data-state=settled]');
    expect(await page.textContent('[data-testid=detail-state]')).toBe('settled');
    expect(await page.$('[data-testid=question]')).toBeNull();
    await page.waitForSelector('[data-testid=mode]:has-text("ended")');
    await page.waitForSelector('[data-testid=stage-row][data-stage=awaitingApproval]');
    await page.waitForSelector('[data-testid=stage-row][data-stage=executing]');
    await screenshot(page, 'live-answered');
    expect(errors).toEqual([]);
    await page.close();

    await waitFor(() => run.out().includes('the run has ended'), 'the end of the run');
    run.child.kill('SIGTERM');
    const r = await run.done;
    expect(r.code).toBe(0);
    const file = /session log: (\S+)/.exec(r.out)?.[1];
    const { events } = await readJsonlLog(file!);
    expect(events).toContainEqual(expect.objectContaining({ type: 'tool/approval-answer', callId: bash, answer: 'allowed-once' }));
    const result = events.find((e) => e.type === 'tool/result' && e.callId === bash);
    expect(result).toMatchObject({ result: { isError: false, content: expect.stringContaining('approved-from-the-page') } });
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', outcome: 'completed' });
  }, HANG);

  it('denies with a reason from the page: the reason is logged and is in the model\'s next request (issue 32 item 4)', async () => {
    const server = await startLoopbackServer();
    try {
      const dir = workDir();
      server.reply(
        openAiChatReply({ text: ['A command.'], toolCalls: [{ id: 'c1', name: 'bash', arguments: JSON.stringify({ command: 'echo never-run' }) }] }),
        openAiChatReply({ text: ['Understood.'] }),
      );
      const run = startDsh(dir, ['run', 'go', '--inspect', '--model', 'openai-compatible:m', '--base-url', server.url]);
      const url = await waitFor(() => /inspector at (http:\/\/127\.0\.0\.1:\d+\/\?t=\S+)/.exec(run.out())?.[1], 'the inspector URL');
      const { page, errors } = await openPage(browser, url);
      const bash = 'c1';
      await page.waitForSelector(`[data-testid=question][data-call-id="${bash}"]`);
      page.once('dialog', (d) => void d.accept('not on a Friday'));
      await page.click(`[data-testid=question][data-call-id="${bash}"] [data-testid=deny-with-reason]`);
      await page.waitForSelector('[data-testid=mode]:has-text("ended")');
      expect(errors).toEqual([]);
      await page.close();
      await waitFor(() => run.out().includes('the run has ended'), 'the end of the run');
      run.child.kill('SIGTERM');
      const r = await run.done;
      expect(r.code).toBe(0);
      const { events } = await readJsonlLog(/session log: (\S+)/.exec(r.out)![1]!);
      expect(events).toContainEqual(expect.objectContaining({ type: 'tool/approval-answer', callId: bash, answer: 'denied', reason: 'not on a Friday' }));
      const next = server.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown; tool_call_id?: string }>;
      expect(String(next.find((m) => m.role === 'tool' && m.tool_call_id === bash)?.content)).toContain('not on a Friday');
    } finally {
      await server.close();
    }
  }, HANG);
});
