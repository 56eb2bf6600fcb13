// The React example (examples/react-app) in real headless Chromium (Debian's `chromium`, driven by
// playwright-core): the proof that dsh's machines run in a browser. The app is built by its own
// script (`npm run example:react`), served on loopback, and used as a person would: it runs a turn,
// the parallel batch of reads shows in call order (the third read settles while the second waits
// for approval, and its result is held until the second commits), the approval buttons answer
// (once, deny, always: an `allowed-always` is not asked again), a turn cancelled while a question
// is open withdraws it, and the page logs no console error.
// Screenshots go to test-artifacts/ (git-ignored). No timing is asserted: every wait is on a state
// of the page, with bounds that only catch a hang.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';

const root = process.cwd();
const ARTIFACTS = join(root, 'test-artifacts');
const HANG = 300_000;
const WAIT = 60_000;

/** Debian's chromium: its real binary, else the wrapper on PATH (DSH_CHROMIUM overrides). */
function chromiumPath(): string | undefined {
  for (const p of [process.env.DSH_CHROMIUM, '/usr/lib/chromium/chromium']) if (p && existsSync(p)) return p;
  const which = spawnSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' });
  return which.status === 0 ? which.stdout.trim() || undefined : undefined;
}

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
const waitRows = (id: string, expected: string[]) => poll(() => rowsOf(id)).toEqual(expected);
const poll = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: WAIT, interval: 50 });
const click = (id: string, callId: string, name: 'Allow once' | 'Allow always' | 'Deny') =>
  turn(id).locator(`li.call[data-call-id="${callId}"]`).getByRole('button', { name }).click();

describe('the React example in Chromium', () => {
  it('runs a turn: a parallel batch in call order, approvals answered by buttons, no console error', async () => {
    await page.goto(url);
    await page.getByRole('heading', { name: 'dsh in a web page' }).waitFor();
    await page.getByRole('button', { name: 'Run a turn' }).click();

    // The batch of three reads: the second asks. The first and third run beside it; the third's
    // result is held (its actor is `settled`) until the second, before it, commits.
    await waitRows('turn-1', ['call-1-0 ok', 'call-1-1 awaitingApproval', 'call-1-2 settled']);
    await poll(() => turn('turn-1').locator('li.call[data-call-id="call-1-2"] .note').textContent()).toBe('result held until the calls before it commit');
    await page.screenshot({ path: join(ARTIFACTS, 'react-app-approval.png'), fullPage: true });

    await click('turn-1', 'call-1-1', 'Allow once');
    // Then the write (step 2) asks; deny it.
    await waitRows('turn-1', ['call-1-0 ok', 'call-1-1 ok', 'call-1-2 ok', 'call-2-0 awaitingApproval']);
    await click('turn-1', 'call-2-0', 'Deny');
    await waitRows('turn-1', ['call-1-0 ok', 'call-1-1 ok', 'call-1-2 ok', 'call-2-0 APPROVAL_DENIED']);
    await poll(() => turn('turn-1').getAttribute('data-outcome')).toBe('completed');
    await poll(() => turn('turn-1').locator('.answer').textContent()).toBe('Done, but 1 call(s) were denied.');
    expect(await page.locator('.files code').allTextContents()).toEqual(['notes/plan.md', 'notes/todo.md', 'secrets/token']);

    // A second turn, cancelled while a read waits for approval: the question is withdrawn (its
    // buttons go) and its call ends ABORTED_BEFORE_DISPATCH (its body never ran); the results
    // stay in call order.
    await page.getByRole('button', { name: 'Run a turn' }).click();
    await waitRows('turn-2', ['call-1-0 ok', 'call-1-1 awaitingApproval', 'call-1-2 settled']);
    await turn('turn-2').getByRole('button', { name: 'Cancel' }).click();
    await poll(() => turn('turn-2').getAttribute('data-outcome')).toBe('cancelled');
    expect(await rowsOf('turn-2')).toEqual(['call-1-0 ok', 'call-1-1 ABORTED_BEFORE_DISPATCH', 'call-1-2 ok']);
    expect(await page.getByRole('button', { name: 'Allow once' }).count()).toBe(0);

    // A third turn: "Allow always" on both questions.
    await page.getByRole('button', { name: 'Run a turn' }).click();
    await waitRows('turn-3', ['call-1-0 ok', 'call-1-1 awaitingApproval', 'call-1-2 settled']);
    await click('turn-3', 'call-1-1', 'Allow always');
    await waitRows('turn-3', ['call-1-0 ok', 'call-1-1 ok', 'call-1-2 ok', 'call-2-0 awaitingApproval']);
    await click('turn-3', 'call-2-0', 'Allow always');
    await poll(() => turn('turn-3').getAttribute('data-outcome')).toBe('completed');
    await poll(() => turn('turn-3').locator('.answer').textContent()).toBe('Done: read the notes and wrote summary.md.');
    expect(await page.locator('.files code').allTextContents()).toContain('summary.md');

    // A fourth turn runs without a question: both answers were "always" (same tool, same args).
    await page.getByRole('button', { name: 'Run a turn' }).click();
    await poll(() => turn('turn-4').getAttribute('data-outcome')).toBe('completed');
    expect(await rowsOf('turn-4')).toEqual(['call-1-0 ok', 'call-1-1 ok', 'call-1-2 ok', 'call-2-0 ok']);
    expect(await page.getByRole('button', { name: 'Allow once' }).count()).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, 'react-app.png'), fullPage: true });

    // No warning in the session log either (a withdrawn question is not an APPROVAL_FAILED).
    expect(await page.locator('.log-size').getAttribute('data-warnings')).toBe('0');
    expect(problems).toEqual([]);
  }, HANG);
});
