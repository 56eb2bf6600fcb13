// A failure `explore` found (dsh/testing), opened as a user would: `dsh inspect <its log file>` in
// real headless Chromium shows the failing call (issue 35: the counterexample log opens in the
// inspector). The agent: a body behind a wrapper that swallows its abort signal.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineTool, sleep, type ExecContext } from '../../../src/index.js';
import { explore, scriptedModel, SPEC_RULES } from '../../../src/testing/index.js';
import { startDsh, waitFor } from '../../cli/spawnDsh.js';
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

describe('a counterexample of explore in dsh inspect (Chromium)', () => {
  it('opens, and the failing call shows how it ended', async () => {
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

    const run = startDsh(dir, ['inspect', failure!.logFile!]);
    const url = await waitFor(() => /open (http:\/\/127\.0\.0\.1:\d+\/\?t=\S+)/.exec(run.out())?.[1], 'the inspector URL');
    const { page, errors } = await openPage(browser, url);
    await page.waitForSelector('[data-testid=mode]:has-text("recorded")');
    await page.click('[data-testid=call-row][data-key="fetch-1"]');
    await page.waitForSelector('[data-testid=detail][data-key="fetch-1"] [data-testid=call-error]');
    expect(await page.textContent('[data-testid=call-error]')).toMatch(new RegExp(`^${code}: `));
    expect(await page.textContent('[data-testid=detail-state]')).toBe('settled');
    await screenshot(page, 'explore-counterexample');
    expect(errors).toEqual([]);
    await page.close();
    run.child.kill('SIGTERM');
    expect((await run.done).code).toBe(0);
  }, HANG);
});
