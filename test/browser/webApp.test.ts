// The web app example (examples/web-app: a Node server on dsh/server, a React page on dsh/client and
// dsh/react) in real headless Chromium against the example's real server process, whose model is
// the real `@ai-sdk/openai-compatible` provider talking to a loopback server that speaks the Chat
// Completions wire protocol (issue 34's checks):
// - a deny reason typed in the page reaches the model, and the file is not written;
// - a reload mid-turn shows every event once and the turn completes;
// - two tabs answer one approval at the same instant: both show the one answer, the log holds one;
// - a server restart while an approval waits: the page reconnects, the question is answerable, the
//   turn completes and the body ran once.
// No timing is asserted: every wait is on a state of the page or a file, with bounds that only catch a hang.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPath } from './chromiumPath.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startLoopbackServer, type LoopbackServer } from '../model/wire/loopbackServer.js';
import { openAiChatReply } from '../model/wire/openaiChat.js';

const root = process.cwd();
const ARTIFACTS = join(root, 'test-artifacts');
const HANG = 300_000;
const WAIT = 60_000;


let work: string;
let pageDir: string;
let provider: LoopbackServer;
let server: { child: ChildProcess; url: string; port: number } | undefined;
let browser: Browser | undefined;
let context: BrowserContext;
const problems: string[] = [];

/** Starts the example's server as a process (from source, through tsx); resolves with its URL. */
async function startServer(port = 0): Promise<{ child: ChildProcess; url: string; port: number }> {
  const child = spawn(process.execPath, ['--import', pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href, join(root, 'examples', 'web-app', 'server.ts')], {
    cwd: root,
    env: {
      ...process.env,
      TSX_TSCONFIG_PATH: join(root, 'examples', 'web-app', 'tsconfig.server.json'),
      MODEL: 'loopback-model',
      OPENAI_BASE_URL: `${provider.url}/v1`,
      WORKSPACE: join(work, 'workspace'),
      SESSIONS_DIR: join(work, 'sessions'),
      PAGE_DIR: pageDir,
      PORT: String(port),
      SESSION_SECRET: 'the-example-secret',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const m = /open (http:\/\/127\.0\.0\.1:(\d+)\/)/.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout!.on('data', check);
    child.on('exit', (code) => reject(new Error(`the example server exited (${code}):\n${out}`)));
  });
  return { child, url, port: Number(new URL(url).port) };
}

async function stopServer(s: { child: ChildProcess }): Promise<void> {
  if (s.child.exitCode !== null) return;
  const exited = new Promise((resolve) => s.child.once('exit', resolve));
  s.child.kill('SIGTERM');
  await exited;
}

beforeAll(async () => {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error("Debian's chromium is not installed (apt-get install -y chromium; .ci/run does it)");
  work = mkdtempSync(join(tmpdir(), 'dsh-web-app-'));
  mkdirSync(join(work, 'workspace'));
  pageDir = join(work, 'page');
  const built = spawnSync('npm', ['run', 'example:web', '--', '--outDir', pageDir, '--emptyOutDir', '--logLevel', 'warn'], { cwd: root, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`npm run example:web failed (${built.status}):\n${built.stdout}${built.stderr}`);
  provider = await startLoopbackServer();
  server = await startServer();
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
  context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  mkdirSync(ARTIFACTS, { recursive: true });
}, HANG);

afterAll(async () => {
  await browser?.close();
  if (server) await stopServer(server);
  await provider?.close();
  if (work) rmSync(work, { recursive: true, force: true });
}, HANG);

async function newPage(url: string): Promise<Page> {
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT);
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(url);
  await page.getByText(/^connection: open$/).waitFor();
  return page;
}

const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: WAIT, interval: 50 });
const turnState = (page: Page) => page.locator('section.turn').first().evaluate((e) => `${e.getAttribute('data-state')} ${e.getAttribute('data-outcome')}`);
const sessionIdOf = (page: Page) => /#session=(.+)$/.exec(page.url())?.[1] ?? '';
/** The session's log as the server wrote it (the checksum before each line dropped). */
const logOf = (id: string) =>
  readFileSync(join(work, 'sessions', `${id}.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l.replace(/^[0-9a-f]{8} /, '')) as { seq: number; type: string; answer?: string });
const writeCall = (id: string, path: string) => openAiChatReply({ toolCalls: [{ id, name: 'write', arguments: JSON.stringify({ path, content: `${path} body\n` }) }] });

async function ask(page: Page, prompt: string) {
  await page.getByLabel('prompt').fill(prompt);
  await page.getByRole('button', { name: 'Send' }).click();
}

describe('the web app example in Chromium, against its real server', () => {
  it('a deny reason typed in the page reaches the model; the file is not written', async () => {
    provider.reply(writeCall('w1', 'denied.txt'), openAiChatReply({ text: ['Understood, I will not.'] }));
    const page = await newPage(server!.url);
    await ask(page, 'write denied.txt');
    await page.getByRole('button', { name: 'Deny' }).waitFor();
    await page.getByLabel('reason').fill('keep that file out of the repo');
    await page.getByRole('button', { name: 'Deny' }).click();
    await poll(() => turnState(page)).toBe('ended completed');
    const last = provider.requests.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(last.messages.filter((m) => m.role === 'tool'))).toContain('keep that file out of the repo');
    expect(existsSync(join(work, 'workspace', 'denied.txt'))).toBe(false);
    await page.screenshot({ path: join(ARTIFACTS, 'web-app-deny.png'), fullPage: true });
    await page.close();
  }, HANG);

  it('a reload mid-turn shows every event once, and the turn completes', async () => {
    provider.reply(writeCall('w2', 'reloaded.txt'), openAiChatReply({ text: ['Written.'] }));
    const page = await newPage(server!.url);
    await ask(page, 'write reloaded.txt');
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    expect(await page.locator('section.turn').count()).toBe(1);
    expect(await page.locator('li.call').count()).toBe(1);
    await page.getByRole('button', { name: 'Allow' }).click();
    await poll(() => turnState(page)).toBe('ended completed');
    const id = sessionIdOf(page);
    await poll(async () => Number(await page.locator('main').getAttribute('data-last-seq'))).toBe(logOf(id).at(-1)!.seq);
    expect(readFileSync(join(work, 'workspace', 'reloaded.txt'), 'utf8')).toBe('reloaded.txt body\n');
    expect(await page.locator('li.call').count()).toBe(1);
    await page.close();
  }, HANG);

  it('two tabs answer one approval at the same instant: one answer wins, both tabs show it, the log holds one', async () => {
    provider.reply(writeCall('w3', 'raced.txt'), openAiChatReply({ text: ['Done.'] }));
    const tabA = await newPage(server!.url);
    await ask(tabA, 'write raced.txt');
    const tabB = await newPage(tabA.url());
    await tabA.getByRole('button', { name: 'Allow' }).waitFor();
    await tabB.getByRole('button', { name: 'Allow' }).waitFor();
    await tabB.getByLabel('reason').fill('no');
    // Both clicks in the same moment (no actionability waits: the first answer may already be
    // removing the other tab's buttons, which is the race this checks).
    const press = (page: Page, name: string) =>
      page.evaluate((label) => {
        const button = Array.from(document.querySelectorAll('button')).find((b) => b.textContent === label);
        button?.click();
        return button !== undefined;
      }, name);
    const pressed = await Promise.all([press(tabA, 'Allow'), press(tabB, 'Deny')]);
    expect(pressed).toContain(true);
    await poll(() => turnState(tabA)).toBe('ended completed');
    await poll(() => turnState(tabB)).toBe('ended completed');
    const answers = logOf(sessionIdOf(tabA)).filter((e) => e.type === 'tool/approval-answer');
    expect(answers).toHaveLength(1);
    const shown = answers[0]!.answer!;
    expect(await tabA.getByTestId('answer').textContent()).toBe(shown);
    expect(await tabB.getByTestId('answer').textContent()).toBe(shown);
    expect(existsSync(join(work, 'workspace', 'raced.txt'))).toBe(shown === 'allowed-once');
    await tabA.close();
    await tabB.close();
  }, HANG);

  it('a server restart while an approval waits: the page reconnects, the question is answerable again, the body runs once', async () => {
    provider.reply(writeCall('w4', 'restarted.txt'), openAiChatReply({ text: ['Written after the restart.'] }));
    const page = await newPage(server!.url);
    await ask(page, 'write restarted.txt');
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    const port = server!.port;
    await stopServer(server!);
    await page.getByText(/^connection: (retrying|connecting)$/).waitFor();
    server = await startServer(port);
    await page.getByText(/^connection: open$/).waitFor();
    await page.getByRole('button', { name: 'Allow' }).click();
    await poll(() => turnState(page)).toBe('ended completed');
    expect(readFileSync(join(work, 'workspace', 'restarted.txt'), 'utf8')).toBe('restarted.txt body\n');
    const log = logOf(sessionIdOf(page));
    expect(log.filter((e) => e.type === 'tool/result')).toHaveLength(1);
    expect(log.map((e) => e.type)).toContain('turn/suspended');
    await page.screenshot({ path: join(ARTIFACTS, 'web-app-restart.png'), fullPage: true });
    expect(problems).toEqual([]);
    expect(readdirSync(join(work, 'sessions')).filter((f) => f.endsWith('.jsonl')).length).toBeGreaterThanOrEqual(4);
    await page.close();
  }, HANG);

  it('useChat (@ai-sdk/react) shows the session\'s tool call; an approval answered there runs the body once', async () => {
    provider.reply(writeCall('w5', 'chat.txt'), openAiChatReply({ text: ['Written from the chat.'] }));
    const page = await context.newPage();
    page.setDefaultTimeout(WAIT);
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    await page.goto(`${server!.url}chat.html`);
    await page.getByLabel('message').fill('write chat.txt');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('button', { name: 'Approve' }).click();
    await poll(() => page.getByTestId('output').textContent()).toContain('chat.txt');
    await page.getByText('Written from the chat.').waitFor();
    expect(readFileSync(join(work, 'workspace', 'chat.txt'), 'utf8')).toBe('chat.txt body\n');
    const log = logOf(sessionIdOf(page));
    expect(log.filter((e) => e.type === 'tool/approval-answer').map((e) => e.answer)).toEqual(['allowed-once']);
    expect(log.filter((e) => e.type === 'tool/result')).toHaveLength(1);
    expect(log.filter((e) => e.type === 'turn/start')).toHaveLength(1);
    await page.screenshot({ path: join(ARTIFACTS, 'web-app-use-chat.png'), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  }, HANG);
});

