import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiEvent, EventPage } from '../../src/client/events.js';
import { expectAccessible, launchBrowser, openConsole, saveScreenshots, signIn, type ConsolePage } from '../helpers/browser.js';
import { eventId, eventRow } from '../helpers/events.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';
import { insertEvents, insertGateway } from '../helpers/store-rows.js';

const MINUTE = 60_000;
/** 132 events, six to a millisecond (three of each gateway), so that a gateway's pages end inside a millisecond. */
const EVENTS = 132;

let t: TestServer;
let browser: Browser;
let admin: ConsolePage;
let range: { start: number; end: number };
const gateways = { north: '', south: '' };

/** The `datetime-local` text of an instant, in this machine's time zone (chromium's too). */
function localInput(at: number): string {
  const d = new Date(at);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** What a row of the table shows of an event that names it: its scan code and scanner. */
const shown = (event: ApiEvent) => [String(event.scan_code ?? ''), String(event.device_id ?? '')];

/** The scan code and scanner of each row of the page's table, top to bottom. */
async function rows(page: Page): Promise<string[][]> {
  const table = page.getByRole('table', { name: 'Events' });
  await table.waitFor();
  return table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.children[2]!.textContent!, tr.children[5]!.textContent!]));
}

/** Sets the range and gateway of the page and shows the first page. */
async function query(page: Page, from: number, to: number, gateway: string): Promise<void> {
  await page.getByLabel('From').fill(localInput(from));
  await page.getByLabel('To').fill(localInput(to));
  await page.getByLabel('Gateway').selectOption({ label: gateway });
  await page.getByRole('button', { name: 'Show' }).click();
}

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  gateways.north = await insertGateway(t, CUSTOMER, 'North door');
  gateways.south = await insertGateway(t, CUSTOMER, 'South door');
  const first = Math.floor((Date.now() - 2 * 60 * MINUTE) / MINUTE) * MINUTE;
  range = { start: first - 10 * MINUTE, end: first + 20 * MINUTE };
  await insertEvents(
    t,
    CUSTOMER,
    Array.from({ length: EVENTS }, (_, i) => {
      const gateway = i % 2 ? gateways.south : gateways.north;
      // Codes a spreadsheet would take for a formula, or that need quoting, go through the CSV as the API writes them.
      const code = i === 7 ? '=SUM(A1:A9)' : i === 8 ? 'with, comma' : `CODE-${String(i).padStart(3, '0')}`;
      const fields = i % 10 === 9 ? { type: 'telemetry', device_battery: 40 + (i % 60) } : { scan_code: code };
      return eventRow({ id: eventId(i), created: first + Math.floor(i / 6), gateway_id: gateway, gateway_station: i % 2 ? 'south' : 'north', device_id: `scanner-${i}`, ...fields });
    }),
  );
  admin = await openConsole(browser, t.url, '#/events');
  await signIn(admin.page, ADMIN_EMAIL, ADMIN_PASSWORD);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('the Events page', () => {
  it('lists a range a page at a time, newest first, as the API\'s keyset pages', async () => {
    const { page } = admin;
    // The last day by default: the events of two hours ago are in it.
    await expect.poll(async () => (await rows(page))[0]).toEqual(['CODE-131', 'scanner-131']);
    await query(page, range.start, range.end, 'All gateways');

    let next: string | undefined = `/${CUSTOMER}/events?start_time_millis=${range.start}&end_time_millis=${range.end}&limit=50`;
    const pages: string[][][] = [];
    while (next) {
      const answer: EventPage = await t.admin.get<EventPage>(next);
      pages.push(answer.items.map(shown));
      next = answer.links.next;
    }
    expect(pages.map((p) => p.length)).toEqual([50, 50, 32]);
    const pager = page.getByRole('group', { name: 'Events pages' });
    await expect.poll(() => rows(page)).toEqual(pages[0]);
    expect(await pager.textContent()).toContain('Page 1');
    await expectAccessible(page);
    await saveScreenshots(page, 'events');

    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => rows(page)).toEqual(pages[1]);
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => rows(page)).toEqual(pages[2]);
    expect(await pager.textContent()).toContain('Page 3');
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await expect.poll(() => rows(page)).toEqual(pages[1]);
  });

  it('lists one gateway\'s events in pages of its own, cut inside a millisecond, none skipped or repeated', async () => {
    const { page } = admin;
    await query(page, range.start, range.end, 'South door');
    const all = await t.admin.get<EventPage>(`/${CUSTOMER}/events?gateway_id=${gateways.south}&start_time_millis=${range.start}&end_time_millis=${range.end}`);
    expect(all.items).toHaveLength(66);
    // Page 1's last event and page 2's first share a millisecond.
    expect(all.items[49]!.created).toBe(all.items[50]!.created);
    await expect.poll(() => rows(page)).toEqual(all.items.slice(0, 50).map(shown));
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => rows(page)).toEqual(all.items.slice(50).map(shown));
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    expect(await page.getByRole('row').filter({ hasText: 'scanner-9' }).getByRole('cell').allTextContents()).toEqual(['telemetry', '', 'South door', 'south', 'scanner-9', '49 %']);
    await saveScreenshots(page, 'events-gateway');
    expect(admin.problems).toEqual([]);
  });

  it('exports the range: Export CSV shows the task running and downloads a CSV equal to the API\'s', async () => {
    const { page } = admin;
    await query(page, range.start, range.end, 'All gateways');
    await expect.poll(() => rows(page).then((r) => r.length)).toBe(50);
    // The task's first look is held back, so that the running export can be seen.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/events/export/tasks/*', async (route) => {
      await held;
      await route.continue();
    });
    const downloaded = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export CSV' }).click();
    await page.getByRole('progressbar', { name: 'Export progress' }).waitFor();
    expect(await page.getByRole('status').filter({ hasText: 'Exporting' }).textContent()).toMatch(/^Exporting the events from .+ to .+… 0 s$/);
    await expectAccessible(page);
    await saveScreenshots(page, 'events-exporting');
    release();

    const file = readFileSync(await (await downloaded).path());
    await page.getByRole('status').filter({ hasText: 'the CSV file is downloading' }).waitFor();
    await page.unroute('**/events/export/tasks/*');
    const { download_link } = await t.admin.get<{ download_link: string }>(`/${CUSTOMER}/events/export?start_time_millis=${range.start}&end_time_millis=${range.end}`);
    const api = Buffer.from(await (await fetch(download_link)).arrayBuffer());
    expect(file.toString()).toBe(api.toString());
    const lines = file.toString().split('\r\n');
    expect(lines).toHaveLength(1 + EVENTS + 1);
    expect(lines[8]).toContain(`,'=SUM(A1:A9),`);
    expect(lines[9]).toContain(',"with, comma",');
    await saveScreenshots(page, 'events-exported');

    // Download again: a fresh link from the task.
    const again = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download again' }).click();
    expect(readFileSync(await (await again).path()).toString()).toBe(api.toString());
    expect(admin.problems).toEqual([]);
  });

  it('says what to correct: a range the console refuses, and the API\'s details for one it refuses', async () => {
    const { page } = admin;
    await query(page, range.end, range.start, 'All gateways');
    expect(await page.getByRole('alert').textContent()).toBe('From must not be later than To.');
    await query(page, Date.UTC(1960, 0, 1), range.end, 'All gateways');
    const refusal = await fetch(`${t.url}/${CUSTOMER}/events?start_time_millis=${new Date(localInput(Date.UTC(1960, 0, 1))).getTime()}&end_time_millis=${range.end}&limit=50`, {
      headers: { authorization: `Bearer ${t.adminToken}` },
    });
    expect(refusal.status).toBe(400);
    const { details } = (await refusal.json()) as { details: string };
    await expect.poll(() => page.getByRole('alert').textContent()).toBe(details);
    expect(admin.problems).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
  });
});
