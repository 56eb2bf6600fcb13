// `dsh inspect FILE` in real headless Chromium: a recorded session replays from its log; a call
// shows every stage it went through with its timing; scrubbing the timeline changes what the page
// shows; 500 calls stay responsive (paged calls, a virtualised log). No console errors anywhere.
import { appendFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checksumHex, crc32cOfUtf8 } from '../../../src/adapters/log/crc32c.js';
import { readJsonlLog } from '../../../src/adapters/log/jsonlLog.js';
import type { LogEvent } from '../../../src/protocol/index.js';
import { createRuntime, defineTool, type ExecContext } from '../../../src/index.js';
import { sleep } from '../../../src/runtime/clock.js';
import { explore, scriptedModel, SPEC_RULES } from '../../../src/testing/index.js';
import { startDsh, waitFor } from '../../cli/spawnDsh.js';
import { launch, openPage, screenshot } from './chromium.js';
import { recordSession, workDir } from './sessions.js';

const HANG = 180_000;
let browser: Browser;

beforeAll(async () => {
  browser = await launch();
}, HANG);
afterAll(async () => {
  await browser?.close();
});

const events = async (file: string) => (await readJsonlLog(file)).events;

/** `dsh inspect FILE` as a user runs it; resolves with the URL it prints. */
async function inspect(dir: string, file: string) {
  const run = startDsh(dir, ['inspect', file]);
  const url = await waitFor(() => /open (http:\/\/127\.0\.0\.1:\d+\/\?t=\S+)/.exec(run.out())?.[1], 'the inspector URL');
  return {
    url,
    async stop() {
      run.child.kill('SIGTERM');
      const r = await run.done;
      expect(r.code).toBe(0);
    },
  };
}

describe('dsh inspect on a recorded session (Chromium)', () => {
  it('without a session to show: one line, exit 1; a missing file: one line, exit 1', async () => {
    const dir = workDir();
    const none = await startDsh(dir, ['inspect']).done;
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/^dsh inspect: no sessions in .*\.dsh\/sessions/);
    const missing = await startDsh(dir, ['inspect', 'nope.jsonl']).done;
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/^dsh inspect: .*nope\.jsonl: no such file or directory\n$/);
  }, HANG);

  it('shows every stage of a call with its timing, and scrubbing the timeline changes what is shown', async () => {
    const dir = workDir();
    const file = await recordSession(dir, [
      // Model output is hostile: markup in it is shown as text, never parsed.
      { text: 'Reading <img src=x onerror="window.pwned=1">, then a command.', toolCalls: [{ toolName: 'read', input: { path: 'a.txt' } }, { toolName: 'grep', input: { pattern: '<script>window.pwned=2</script>beta' } }] },
      { toolCalls: [{ toolName: 'bash', input: { command: 'echo hello' } }] },
      { text: 'Done.' },
    ]);
    const log = await events(file);
    const bashResult = log.find((e): e is Extract<LogEvent, { type: 'tool/result' }> => e.type === 'tool/result' && e.toolName === 'bash')!;
    const durations = bashResult.result.metadata.durationsMs as Record<string, number>;
    const stages = Object.keys(durations).filter((k) => k !== 'total');
    // The call asked (awaitingApproval) and ran: the log has the stages the page must show.
    expect(stages).toEqual(expect.arrayContaining(['validating', 'preExecute', 'awaitingApproval', 'executing', 'finalizing']));

    const server = await inspect(dir, file);
    const { page, errors } = await openPage(browser, server.url);
    // Recorded once the server says the log will not grow (its `session` frame, after the backlog).
    await page.waitForSelector('[data-testid=mode]:has-text("recorded")');
    expect(await page.getAttribute('[data-testid=mode]', 'class')).not.toMatch(/\bon\b/);

    // Select the bash call: its diagram, its stages with timings.
    await page.click(`[data-testid=call-row][data-key="${bashResult.callId}"]`);
    await page.waitForSelector(`[data-testid=detail][data-key="${bashResult.callId}"] [data-testid=stage-row]`);
    const shown = await page.$$eval('[data-testid=stage-row]', (rows) => rows.map((r) => [r.getAttribute('data-stage'), r.children[1]!.textContent]));
    expect(shown.map(([s]) => s)).toEqual(stages);
    for (const [stage, time] of shown) expect(time).toMatch(new RegExp(`^${durations[stage!]}(\\.\\d+)? ms$`));
    await page.waitForSelector('[data-testid=diagram][data-machine=toolCall] g.current[data-state=settled]');
    for (const s of stages) expect(await page.$(`[data-testid=diagram] g.visited[data-state="${s}"]`)).not.toBeNull();
    expect(await page.textContent('[data-testid=detail-state]')).toBe('settled');
    await screenshot(page, 'recorded-call-stages');

    // Scrub back to the approval request: the call is waiting there, its result not in yet.
    const asked = log.find((e) => e.type === 'tool/approval-request')!;
    await page.fill('[data-testid=scrubber]', String(asked.seq));
    await page.waitForSelector('[data-testid=diagram] g.current[data-state=awaitingApproval]');
    expect(await page.textContent('[data-testid=detail-state]')).toBe('awaitingApproval');
    expect(await page.$('[data-testid=stage-row]')).toBeNull();
    expect(await page.textContent('[data-testid=position]')).toMatch(new RegExp(`^seq ${asked.seq} of ${log.length}`));
    expect(await page.$$eval('.log-row.future', (r) => r.length)).toBe(log.length - asked.seq);
    await screenshot(page, 'recorded-scrubbed');

    // Further back, before the call: it is not there yet; the step before is.
    const called = log.find((e) => e.type === 'tool/call' && e.callId === bashResult.callId)!;
    await page.fill('[data-testid=scrubber]', String(called.seq - 1));
    await page.waitForSelector('[data-testid=not-yet]');
    expect(await page.$$eval('[data-testid=call-row]', (r) => r.length)).toBe(2);

    // A log entry selects its actor: the step of the first call.
    await page.fill('[data-testid=scrubber]', String(log.length));
    await page.click('[data-testid=log-row][data-seq="2"]');
    await page.waitForSelector('[data-testid=detail][data-kind=step][data-key="turn-1/0"]');
    await page.waitForSelector('[data-testid=diagram][data-machine=step] g.current[data-state=done]');
    await page.click('[data-testid=log-row][data-seq="1"]');
    await page.waitForSelector('[data-testid=diagram][data-machine=turn] g.current[data-state=done]');

    await page.click('[data-testid=step-link][data-key="turn-1/0"]');
    await page.waitForSelector('[data-testid=detail] pre:has-text("<img src=x")');
    expect(await page.$$('img')).toHaveLength(0);
    expect(await page.$$('body script:not([src])')).toHaveLength(0);
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();

    expect(errors).toEqual([]);
    await page.close();
    await server.stop();
  }, HANG);

  it("shows a call's whole result (a bash call's output and exit code) and an edit approval's diff", async () => {
    const dir = workDir();
    const file = await recordSession(dir, [
      { toolCalls: [{ toolName: 'read', input: { path: 'a.txt' } }] },
      { toolCalls: [{ toolName: 'edit', input: { path: 'a.txt', oldString: 'beta', newString: 'BETA' } }] },
      { toolCalls: [{ toolName: 'bash', input: { command: 'echo first line; echo second line; echo third line >&2; exit 3' } }] },
      { text: 'Done.' },
    ]);
    const log = await events(file);
    const callOf = (tool: string) => log.find((e): e is Extract<LogEvent, { type: 'tool/result' }> => e.type === 'tool/result' && e.toolName === tool)!;
    const server = await inspect(dir, file);
    const { page, errors } = await openPage(browser, server.url);
    await page.click(`[data-testid=call-row][data-key="${callOf('bash').callId}"]`);
    await page.waitForSelector('[data-testid=call-result]');
    const result = (await page.textContent('[data-testid=call-result]'))!;
    expect(result).toBe(callOf('bash').result.content);
    expect(result).toMatch(/first line[\s\S]*second line[\s\S]*third line/);
    expect(await page.textContent('[data-testid=call-exit-code]')).toBe('3');
    // In the list, the command that exited 3 is neither green nor failed: its badge says how it ended (issue 32 item 6).
    const row = `[data-testid=calls] li:has([data-testid=call-row][data-key="${callOf('bash').callId}"])`;
    expect(await page.getAttribute(row, 'class')).toBe('exited');
    expect(await page.textContent(`${row} .badge`)).toBe('exit 3');
    expect(await page.getAttribute(`[data-testid=calls] li:has([data-testid=call-row][data-key="${callOf('read').callId}"])`, 'class')).toBe('ok');
    await screenshot(page, 'recorded-bash-result');
    await page.click(`[data-testid=call-row][data-key="${callOf('edit').callId}"]`);
    await page.waitForSelector('[data-testid=approval-preview][data-kind=diff]');
    const lines = await page.$$eval('[data-testid=approval-preview] span', (spans) => spans.map((s) => [s.className, s.textContent]));
    expect(lines).toEqual([
      ['meta', '--- a/a.txt'],
      ['meta', '+++ b/a.txt'],
      ['hunk', '@@ -1,2 +1,2 @@'],
      ['', ' alpha'],
      ['del', '-beta'],
      ['add', '+BETA'],
    ]);
    await screenshot(page, 'recorded-edit-preview');
    // The statechart zooms (its labels readable at any window size); fit goes back.
    await page.click('[data-testid=zoom-in]');
    await page.click('[data-testid=zoom-in]');
    await page.waitForSelector('[data-testid=diagram][data-zoom="2"]');
    expect(await page.$eval('[data-testid=diagram-canvas] svg', (svg) => (svg as SVGSVGElement).style.width)).toBe('200%');
    expect(await page.textContent('[data-testid=zoom-level]')).toBe('200%');
    await page.click('[data-testid=zoom-fit]');
    await page.waitForSelector('[data-testid=diagram][data-zoom="1"]');
    // The conversation: the prompt and the model's text.
    expect(await page.$$eval('[data-testid=conv-user]', (els) => els.map((e) => e.textContent))).toEqual(['› inspect me']);
    expect(await page.$$eval('[data-testid=conv-model]', (els) => els.map((e) => e.textContent))).toEqual(['Done.']);
    expect(errors).toEqual([]);
    await page.close();
    await server.stop();
  }, HANG);

  it('stays responsive with 500 calls: the calls are paged, the log virtualised', async () => {
    const dir = workDir();
    const steps = Array.from({ length: 10 }, (_, s) => ({ toolCalls: Array.from({ length: 50 }, (_, i) => ({ toolName: 'read', input: { path: 'a.txt', offset: s * 50 + i } })) }));
    const file = await recordSession(dir, [...steps, { text: 'Read it 500 times.' }]);
    const log = await events(file);
    expect(log.filter((e) => e.type === 'tool/call')).toHaveLength(500);

    const server = await inspect(dir, file);
    const t0 = performance.now();
    const { page, errors } = await openPage(browser, server.url);
    // The backlog streams in: the page is complete once the server says the log will not grow
    // (a loaded machine may draw the pager before the last calls arrived).
    await page.waitForSelector('[data-testid=mode]:has-text("recorded")');
    await page.waitForSelector('[data-testid=pager]:has-text("page 1 of 10")');
    const loadMs = performance.now() - t0;
    expect(await page.$$eval('[data-testid=call-row]', (r) => r.length)).toBe(50);
    // Only the rows in view are in the DOM, not one per event.
    const rows = await page.$$eval('[data-testid=log-row]', (r) => r.length);
    expect(rows).toBeGreaterThan(10);
    expect(rows).toBeLessThan(150);

    // Scrubbing across the session, paging, and scrolling the log to its middle all answer.
    const t1 = performance.now();
    for (const at of [100, 400, 800, log.length]) {
      await page.fill('[data-testid=scrubber]', String(at));
      await page.waitForSelector(`[data-testid=position]:text-matches("^seq ${at} of ")`);
    }
    const scrubMs = (performance.now() - t1) / 4;
    await page.click('[data-testid=page-next]');
    await page.waitForSelector('[data-testid=pager]:has-text("page 2 of 10")');
    await page.$eval('[data-testid=log]', (el) => (el.scrollTop = el.scrollHeight / 2));
    const middle = Math.round(log.length / 2);
    await page.waitForFunction((seq) => Array.from(document.querySelectorAll('[data-testid=log-row]')).some((r) => Math.abs(Number(r.getAttribute('data-seq')) - seq) < 30), middle);
    // Selecting a call from the log shows it and turns the pager to its page.
    const late = log.filter((e) => e.type === 'tool/call').at(-1)!;
    await page.$eval('[data-testid=log]', (el, seq) => (el.scrollTop = (seq - 1) * 22 - 100), late.seq);
    await page.click(`[data-testid=log-row][data-seq="${late.seq}"]`);
    await page.waitForSelector('[data-testid=pager]:has-text("page 10 of 10")');
    await page.waitForSelector(`[data-testid=call-row].selected[data-key="${(late as { callId: string }).callId}"]`);
    await screenshot(page, 'recorded-500-calls');
    console.log(`inspector, 500 calls (${log.length} events): page ready in ${loadMs.toFixed(0)} ms, a scrub redrawn in ${scrubMs.toFixed(0)} ms (on a loaded machine)`);

    expect(errors).toEqual([]);
    await page.close();
    await server.stop();
  }, HANG);

  it('--follow: the page is live and shows each event another writer appends, over the wire protocol', async () => {
    const dir = workDir();
    const file = await recordSession(dir, [{ text: 'Done.' }]);
    const before = await events(file);
    const run = startDsh(dir, ['inspect', '--follow', file]);
    const url = await waitFor(() => /open (http:\/\/127\.0\.0\.1:\d+\/\?t=\S+)/.exec(run.out())?.[1], 'the inspector URL');
    const { page, errors } = await openPage(browser, url);
    await page.waitForSelector('[data-testid=mode]:has-text("live")');
    await page.waitForSelector(`[data-testid=log-row][data-seq="${before.length}"]`);
    // Another writer (as dsh resume would) appends a second turn, line by checksummed line.
    const last = before.at(-1)!;
    const more = [
      { type: 'turn/start', turnId: 'turn-2', input: 'and <b>more</b>' },
      { type: 'turn/end', turnId: 'turn-2', outcome: 'completed', steps: 0 },
    ].map((e, i) => ({ seq: last.seq + 1 + i, time: last.time + 1 + i, ...e }));
    for (const e of more) {
      const json = JSON.stringify(e);
      appendFileSync(file, `${checksumHex(crc32cOfUtf8(json))} ${json}\n`);
    }
    await page.waitForSelector(`[data-testid=log-row][data-seq="${last.seq + 2}"]`);
    await page.waitForSelector('[data-testid=turn-link][data-key="turn-2"]');
    expect(await page.textContent('[data-testid=position]')).toMatch(new RegExp(`^seq ${last.seq + 2} of ${last.seq + 2}`));
    expect(await page.$$('b')).toHaveLength(1); // the header's own <b>dsh inspect</b>: the input is text
    expect(errors).toEqual([]);
    await page.close();
    run.child.kill('SIGTERM');
    expect((await run.done).code).toBe(0);
  }, HANG);

  // A failure `explore` found (dsh/testing), opened as a user would (issue 35: the counterexample
  // log opens in the inspector and shows the failing call). The agent: a body behind a wrapper
  // that swallows its abort signal.
  it('a counterexample of explore opens, and the failing call shows how it ended', async () => {
    const dir = workDir();
    const fetchPage = defineTool({
      name: 'fetch',
      input: z.object({ url: z.string() }),
      // The planted bug: the body gets a signal nothing aborts.
      execute: async ({ url }, exec: ExecContext) => {
        await sleep(exec.clock, 10_000, new AbortController().signal);
        return `page ${url}`;
      },
    });
    const report = await explore({
      runtime: (world) => createRuntime({ ...world, tools: [fetchPage] }),
      turn: { input: 'fetch it', model: scriptedModel([{ toolCalls: [{ toolName: 'fetch', input: { url: 'a' }, toolCallId: 'fetch-1' }] }, { text: 'done' }]) },
      choices: { crashes: false },
      failureLogs: dir,
      maxRuns: 100,
    });
    const failure = report.failures.find((f) => f.invariant === SPEC_RULES.signal);
    expect(failure?.logFile).toBeDefined();
    const code = /ended (ABORTED|TIMEOUT)/.exec(failure!.message)![1]!;

    const server = await inspect(dir, failure!.logFile!);
    const { page, errors } = await openPage(browser, server.url);
    await page.waitForSelector('[data-testid=mode]:has-text("recorded")');
    await page.click('[data-testid=call-row][data-key="fetch-1"]');
    await page.waitForSelector('[data-testid=detail][data-key="fetch-1"] [data-testid=call-error]');
    expect(await page.textContent('[data-testid=call-error]')).toMatch(new RegExp(`^${code}: `));
    expect(await page.textContent('[data-testid=detail-state]')).toBe('settled');
    await screenshot(page, 'explore-counterexample');
    expect(errors).toEqual([]);
    await page.close();
    await server.stop();
  }, HANG);
});
