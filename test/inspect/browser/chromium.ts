/**
 * Real headless Chromium for the inspector's tests: Debian's `chromium` (installed by .ci/run;
 * CHROMIUM=path overrides) driven by playwright-core. Every page records its console errors and
 * uncaught exceptions; screenshots go to test-artifacts/inspector/ (git-ignored).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

export const ARTIFACTS = join(import.meta.dirname, '..', '..', '..', 'test-artifacts', 'inspector');

export function chromiumPath(): string {
  const candidates = [process.env.CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((p): p is string => Boolean(p));
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`no Chromium at ${candidates.join(', ')}: apt-get install -y chromium (as .ci/run does)`);
  return found;
}

export function launch(): Promise<Browser> {
  // --no-sandbox: CI runs as root, where Chromium's sandbox will not start.
  return chromium.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

export interface WatchedPage {
  page: Page;
  /** Console errors and uncaught exceptions seen so far. */
  errors: string[];
}

export async function openPage(browser: Browser, url: string, viewport = { width: 1500, height: 950 }): Promise<WatchedPage> {
  const page = await browser.newPage({ viewport });
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.setDefaultTimeout(60_000);
  await page.goto(url);
  await page.waitForSelector('body[data-ready=true]');
  return { page, errors };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path });
  return path;
}
