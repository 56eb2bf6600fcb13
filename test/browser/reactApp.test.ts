// The React example (examples/react-app, built on `dsh/react` and the session view) in real headless
// Chromium (Debian's `chromium`, driven by playwright-core): the proof that dsh's machines and its
// UI binding run in a browser. The app is built by its own script (`npm run example:react`), served
// on loopback, and used as a person would (issue 22.4):
// - a parallel batch renders in call order while its calls finish in reverse (the page holds each
//   read until its Finish button is clicked; a later call shows `settled` until the ones before it commit);
// - an approval is answered by a click (once, deny with a reason, always: not asked again; a cancel withdraws it);
// - a steer typed in the page reaches the next model request (the scripted model answers with it);
// - a turn suspended by "Decide later" is reloaded from its log (kept in localStorage) and resumed from the page;
// - and the page logs no console error or warning.
// Screenshots go to test-artifacts/ (git-ignored). No timing is asserted: every wait is on a state
// of the page, with bounds that only catch a hang.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPath } from './chromiumPath.js';
import type { Browser, Page } from 'playwright-core';

const root = process.cwd();
const ARTIFACTS = join(root, 'test-artifacts');
const HANG = 300_000;
const WAIT = 60_000;


function run(cmd: string, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => done({ code, out }));
  });
}

const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' };

/** A static file server for `dir` on 127.0.0.1 (a free port). */
function serve(dir: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const file = normalize(join(dir, path === '/' ? 'index.html' : path));
    if (!file.startsWith(resolve(dir) + sep) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
  });
  return new Promise((done) => server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    done({ server, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/` });
  }));
}

let out: string;
let server: Server | undefined;
let url: string;
let browser: Browser | undefined;
let page: Page;
const problems: string[] = [];

beforeAll(async () => {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error("Debian's chromium is not installed (apt-get install -y chromium; .ci/run does it)");
  out = mkdtempSync(join(tmpdir(), 'dsh-react-app-'));
  const built = await run('npm', ['run', 'example:react', '--', '--outDir', out, '--emptyOutDir', '--logLevel', 'warn']);
  if (built.code !== 0) throw new Error(`npm run example:react failed (${built.code}):\n${built.out}`);
  ({ server, url } = await serve(out));
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  page.setDefaultTimeout(WAIT);
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`requestfailed: ${r.url()}`));
  mkdirSync(ARTIFACTS, { recursive: true });
}, HANG);

afterAll(async () => {
  await browser?.close();
  await new Promise((done) => (server ? server.close(done) : done(undefined)));
  if (out) rmSync(out, { recursive: true, force: true });
}, HANG);

const turn = (id: string) => page.locator(`section.turn[data-turn-id="${id}"]`);
const rows = (id: string) => turn(id).locator('li.call');
/** Each row of a turn as `callId stage`, in DOM order. */
const rowsOf = (id: string) => rows(id).evaluateAll((els) => els.map((e) => `${e.getAttribute('data-call-id')} ${e.getAttribute('data-stage')}`));
const poll = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: WAIT, interval: 50 });
const waitRows = (id: string, expected: string[]) => poll(() => rowsOf(id)).toEqual(expected);
const row = (id: string, callId: string) => turn(id).locator(`li.call[data-call-id="${callId}"]`);
const click = (id: string, callId: string, name: 'Allow once' | 'Allow always' | 'Deny' | 'Decide later' | 'Finish') => row(id, callId).getByRole('button', { name }).click();
const stateOf = (id: string) => turn(id).getAttribute('data-state');

/** A fresh session: the stored log cleared, the page loaded anew. */
async function fresh() {
  await page.goto(url);
  await page.evaluate(() => window.localStorage.clear());
  await page.reload();
  await page.getByRole('heading', { name: 'dsh in a web page' }).waitFor();
}

const READS = ['call-1-0', 'call-1-1', 'call-1-2'];

describe('the React example in Chromium', () => {
  it('renders a parallel batch in call order while its calls finish in reverse', async () => {
    await fresh();
    await page.getByLabel('Hold each read until I finish it').check();
    // Every render of the call list, as the rows' ids in DOM order (recorded in the page).
    await page.evaluate(() => {
      const seen: string[][] = [];
      Reflect.set(window, '__rowOrders', seen);
      new MutationObserver(() => {
        seen.push(Array.from(document.querySelectorAll('section.turn[data-turn-id="turn-1"] li.call'), (e) => e.getAttribute('data-call-id') ?? ''));
      }).observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    await page.getByRole('button', { name: 'Run a turn' }).click();
    await waitRows('turn-1', ['call-1-0 executing', 'call-1-1 executing', 'call-1-2 executing']);
    await poll(() => turn('turn-1').locator('.step-text').first().textContent()).toBe('Reading the three notes.');

    // The last read finishes first: its result is held (settled) until the two before it commit.
    await click('turn-1', 'call-1-2', 'Finish');
    await waitRows('turn-1', ['call-1-0 executing', 'call-1-1 executing', 'call-1-2 settled']);
    await poll(() => row('turn-1', 'call-1-2').locator('.note').textContent()).toBe('result held until the calls before it commit');
    await page.screenshot({ path: join(ARTIFACTS, 'react-app-batch.png'), fullPage: true });
    await click('turn-1', 'call-1-1', 'Finish');
    await waitRows('turn-1', ['call-1-0 executing', 'call-1-1 settled', 'call-1-2 settled']);
    await click('turn-1', 'call-1-0', 'Finish');
    await waitRows('turn-1', ['call-1-0 ok', 'call-1-1 ok', 'call-1-2 ok', 'call-2-0 awaitingApproval']);
    expect(await page.locator('.finished').getAttribute('data-order')).toBe('notes/done.md notes/todo.md notes/plan.md');
    const orders = await page.evaluate(() => Reflect.get(window, '__rowOrders') as string[][]);
    expect(orders.length).toBeGreaterThan(3);
    for (const o of orders) expect(o).toEqual([...READS, 'call-2-0'].slice(0, o.length));
    await click('turn-1', 'call-2-0', 'Allow once');
    await poll(() => turn('turn-1').getAttribute('data-outcome')).toBe('completed');
    expect(problems).toEqual([]);
  }, HANG);

  it('answers approvals by clicks: allow once, deny with a reason, always (not asked again); a cancel withdraws the question', async () => {
    await fresh();
    await page.getByRole('button', { name: 'Run a turn' }).click();
    await waitRows('turn-1', ['call-1-0 ok', 'call-1-1 ok', 'call-1-2 ok', 'call-2-0 awaitingApproval']);
    await poll(() => row('turn-1', 'call-2-0').locator('.reason').textContent()).toBe('changes a file');
    await page.screenshot({ path: join(ARTIFACTS, 'react-app-approval.png'), fullPage: true });
    await click('turn-1', 'call-2-0', 'Allow once');
    await poll(() => turn('turn-1').getAttribute('data-outcome')).toBe('completed');
    expect(await rowsOf('turn-1')).toEqual(['call-1-0 ok', 'call-1-1 ok', 'call-1-2 ok', 'call-2-0 ok']);
    expect(await turn('turn-1').locator('.answer').textContent()).toBe('Done: read the notes and wrote summary.md.');
    expect(await page.locator('.files code').allTextContents()).toContain('summary.md');

    await page.getByRole('button', { name: 'Run a turn' }).click();
    await waitRows('turn-2', ['call-1-0 ok', 'call-1-1 ok', 'call-1-2 ok', 'call-2-0 awaitingApproval']);
    await row('turn-2', 'call-2-0').getByLabel('reason to deny').fill('not now');
    await click('turn-2', 'call-2-0', 'Deny');
    await poll(() => turn('turn-2').getAttribute('data-outcome')).toBe('completed');
    expect(await rowsOf('turn-2')).toEqual(['call-1-0 ok', 'call-1-1 ok', 'call-1-2 ok', 'call-2-0 APPROVAL_DENIED']);
    expect(await turn('turn-2').locator('.answer').textContent()).toBe('Done, but the write was denied.');

    // A turn cancelled while its question is open: the buttons go, the call never ran.
    await page.getByRole('button', { name: 'Run a turn' }).click();
    await waitRows('turn-3', ['call-1-0 ok', 'call-1-1 ok', 'call-1-2 ok', 'call-2-0 awaitingApproval']);
    await turn('turn-3').getByRole('button', { name: 'Cancel' }).click();
    await poll(() => turn('turn-3').getAttribute('data-outcome')).toBe('cancelled');
    expect(await rowsOf('turn-3')).toEqual(['call-1-0 ok', 'call-1-1 ok', 'call-1-2 ok', 'call-2-0 ABORTED_BEFORE_DISPATCH']);
    expect(await page.getByRole('button', { name: 'Allow once' }).count()).toBe(0);

    await page.getByRole('button', { name: 'Run a turn' }).click();
    await waitRows('turn-4', ['call-1-0 ok', 'call-1-1 ok', 'call-1-2 ok', 'call-2-0 awaitingApproval']);
    await click('turn-4', 'call-2-0', 'Allow always');
    await poll(() => turn('turn-4').getAttribute('data-outcome')).toBe('completed');
    // Same tool, same args: not asked again.
    await page.getByRole('button', { name: 'Run a turn' }).click();
    await poll(() => turn('turn-5').getAttribute('data-outcome')).toBe('completed');
    expect(await rowsOf('turn-5')).toEqual(['call-1-0 ok', 'call-1-1 ok', 'call-1-2 ok', 'call-2-0 ok']);
    expect(await page.getByRole('button', { name: 'Allow once' }).count()).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, 'react-app.png'), fullPage: true });
    expect(problems).toEqual([]);
  }, HANG);

  it('a steer typed in the page reaches the next model request', async () => {
    await fresh();
    await page.getByRole('button', { name: 'Run a turn' }).click();
    await waitRows('turn-1', ['call-1-0 ok', 'call-1-1 ok', 'call-1-2 ok', 'call-2-0 awaitingApproval']);
    await turn('turn-1').getByLabel('steer turn-1').fill('mention the todo list');
    await turn('turn-1').getByRole('button', { name: 'Steer' }).click();
    await poll(() => turn('turn-1').locator('li.steer').getAttribute('data-status')).toBe('waiting');
    await click('turn-1', 'call-2-0', 'Allow once');
    await poll(() => turn('turn-1').getAttribute('data-outcome')).toBe('completed');
    expect(await turn('turn-1').locator('li.steer').getAttribute('data-status')).toBe('delivered');
    expect(await turn('turn-1').locator('li.steer .note').textContent()).toBe('in the request of step 2');
    // The scripted model's last request saw it (its answer quotes the user messages after the turn's own).
    expect(await turn('turn-1').locator('.answer').textContent()).toBe('Done: read the notes and wrote summary.md. You also said: mention the todo list');
    expect(problems).toEqual([]);
  }, HANG);

  it('a suspended session reloads from its log and resumes from the page', async () => {
    await fresh();
    await page.getByRole('button', { name: 'Run a turn' }).click();
    await waitRows('turn-1', ['call-1-0 ok', 'call-1-1 ok', 'call-1-2 ok', 'call-2-0 awaitingApproval']);
    await click('turn-1', 'call-2-0', 'Decide later');
    await poll(() => stateOf('turn-1')).toBe('suspended');
    await page.getByRole('button', { name: 'Resume turn-1' }).waitFor();
    expect(await page.getByRole('button', { name: 'Run a turn' }).isDisabled()).toBe(true);

    // A new page on the stored log: the turn is suspended, its question open but not answerable here yet.
    await page.reload();
    await page.getByRole('heading', { name: 'dsh in a web page' }).waitFor();
    await poll(() => stateOf('turn-1')).toBe('suspended');
    expect(await rowsOf('turn-1')).toEqual(['call-1-0 ok', 'call-1-1 ok', 'call-1-2 ok', 'call-2-0 awaitingApproval']);
    expect(await row('turn-1', 'call-2-0').locator('.approval').getAttribute('data-answerable')).toBe('false');
    expect(await page.locator('.files code').allTextContents()).not.toContain('summary.md');
    await page.screenshot({ path: join(ARTIFACTS, 'react-app-suspended.png'), fullPage: true });

    await page.getByRole('button', { name: 'Resume turn-1' }).click();
    await poll(() => stateOf('turn-1')).toBe('running');
    await click('turn-1', 'call-2-0', 'Allow once');
    await poll(() => turn('turn-1').getAttribute('data-outcome')).toBe('completed');
    expect(await rowsOf('turn-1')).toEqual(['call-1-0 ok', 'call-1-1 ok', 'call-1-2 ok', 'call-2-0 ok']);
    expect(await turn('turn-1').locator('.answer').textContent()).toBe('Done: read the notes and wrote summary.md.');
    expect(await page.locator('.files code').allTextContents()).toContain('summary.md');
    expect(await page.getByRole('button', { name: 'Run a turn' }).isDisabled()).toBe(false);
    expect(problems).toEqual([]);
  }, HANG);
});
