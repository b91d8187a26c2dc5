import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Locator, type Page, type Response } from 'playwright-core';
import { expect } from 'vitest';
import { decodeQrPng } from './qr.js';

/** Debian's chromium (`.ci/run` installs it): playwright-core brings no browser of its own. */
export const CHROMIUM = process.env.SCANHUB_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Headless, no sandbox (CI runs as root), nothing fetched from the network (DESIGN.md "Web console"). */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Where the tests save what they saw: gitignored; look at every picture after changing a page (docs/console.md). */
export const SCREENSHOT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-output', 'console');

export const WIDE = { width: 1280, height: 800 };
export const NARROW = { width: 360, height: 740 };

const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');


/** One chromium per test file (it takes a second to start); each test opens its own page. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

/** A page in a fresh context (its own sessionStorage), and every console error and uncaught exception it shows. */
export interface ConsolePage {
  page: Page;
  /** `console.error` lines and uncaught exceptions, in order: a page that works shows none. */
  problems: string[];
  /** The answer to the page's own request (`GET /`): its headers carry the CSP. */
  response: Response | null;
  close(): Promise<void>;
}

/** Opens the console of the server at `url` (the `hash` route, the board by default) in a fresh context. */
export async function openConsole(browser: Browser, url: string, hash = '#/gateways'): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: WIDE, colorScheme: 'light' });
  // Well within the test's own timeout, so that a missing control fails naming its locator.
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  const response = await page.goto(`${url}/${hash}`);
  return { page, problems, response, close: () => context.close() };
}

/** Signs in on the sign-in page the console is showing, and waits for the page it leads to. */
export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/**
 * Saves `<name>-<wide|narrow>-<light|dark>.png` of the whole page under SCREENSHOT_DIR, at 1280
 * and 360 pixels wide, in both colour schemes; the page is left wide and light.
 */
export async function saveScreenshots(page: Page, name: string): Promise<string[]> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const saved: string[] = [];
  for (const [width, viewport] of [['wide', WIDE], ['narrow', NARROW]] as const) {
    await page.setViewportSize(viewport);
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      const path = join(SCREENSHOT_DIR, `${name}-${width}-${colorScheme}.png`);
      await page.screenshot({ path, fullPage: true });
      saved.push(path);
    }
  }
  await page.setViewportSize(WIDE);
  await page.emulateMedia({ colorScheme: 'light' });
  return saved;
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * Runs axe-core on the page as it is, in both colour schemes, and expects no serious or critical
 * violation. Evaluated through the DevTools protocol: the console's Content-Security-Policy
 * rightly refuses an inline `<script>` (page.addScriptTag), and stays on for the test.
 */
export async function expectAccessible(page: Page): Promise<void> {
  const found: string[] = [];
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(axeSource);
    const violations = (await page.evaluate(`(async () => {
      const result = await window.axe.run(document, { resultTypes: ['violations'] });
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
    })()`)) as AxeViolation[];
    for (const v of violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')) {
      found.push(`${colorScheme}: ${v.impact} ${v.id} (${v.help}) at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  expect(found).toEqual([]);
}

/** The text of the QR code in a screenshot of `image` as the page shows it, or undefined when none is read. */
export async function decodeQrCode(image: Locator): Promise<string | undefined> {
  return decodeQrPng(await image.screenshot());
}
