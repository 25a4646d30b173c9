/**
 * Debian's Chromium for the web interface's browser tests, driven by puppeteer-core (no browser
 * download). A missing browser fails the test run: scripts/ensure-test-chromium.sh installs it.
 */
import { existsSync } from 'node:fs';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

export const CHROMIUM = process.env.WCS_TEST_CHROMIUM ?? '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: run scripts/ensure-test-chromium.sh (or set WCS_TEST_CHROMIUM)`);
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

/** A fresh browser context (own cookies) with one page, and the errors its pages raise. */
export async function newPage(browser: Browser, width = 1280, height = 900): Promise<{ page: Page; errors: string[]; dialogs: string[]; close(): Promise<void> }> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ width, height });
  const errors: string[] = [];
  const dialogs: string[] = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) errors.push(message.text());
  });
  // confirm() of delete forms is accepted; every dialog is recorded (an alert would mean injected script ran).
  page.on('dialog', (dialog) => {
    dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.accept();
  });
  return { page, errors, dialogs, close: () => context.close() };
}

export async function signIn(page: Page, base: string, user: string, password: string): Promise<void> {
  await page.goto(`${base}/sign-in`);
  await page.type('#user', user);
  await page.type('#password', password);
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  await settled(page);
}

/**
 * Waits until a live page shows the latest state: the fingerprint it was built with is what its live endpoint
 * answers now, so it will not reload itself under the test's next step (it reloads first when it is behind).
 */
export async function settled(page: Page): Promise<void> {
  await page.waitForFunction(
    async () => {
      const { liveUrl, liveFingerprint } = document.body.dataset;
      if (!liveUrl) return true;
      const answer = await fetch(liveUrl, { cache: 'no-store', headers: { accept: 'application/json' } });
      return answer.ok && ((await answer.json()) as { fingerprint: string }).fingerprint === liveFingerprint;
    },
    { polling: 200, timeout: 30_000 },
  );
}

/** Submits by clicking and waits for the page the form leads to, settled. */
export async function clickAndWait(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.click(selector)]);
  await settled(page);
}

/** Opens a page of the service and waits until it is settled. */
export async function visit(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await settled(page);
}
