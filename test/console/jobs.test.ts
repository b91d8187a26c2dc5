// The Jobs page (console/pages/jobs/): job configurations created, edited and deleted in the
// browser, and an analysis over seeded scans whose chart is drawn and whose summary equals what
// the API's answer gives (the CLI's figures, src/domain/job-stats.ts).
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toLocalInput } from '../../console/pages/jobs/local-time.js';
import type { JobAnalysis, JobConfig } from '../../src/client/jobs.js';
import { formatDuration, summarizeDurations } from '../../src/domain/job-stats.js';
import { CONSOLE_DIR } from '../../src/server/routes/console.js';
import { expectAccessible, launchBrowser, openConsole, saveScreenshots, signIn, type ConsolePage } from '../helpers/browser.js';
import { eventId, scanRow } from '../helpers/events.js';
import { insertEvents } from '../helpers/store-rows.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';

const MINUTE = 60_000;

let t: TestServer;
let browser: Browser;
let admin: ConsolePage;
/** The gateways' ids by name. */
let ids: Record<string, string>;
/** A minute three hours ago: the seeded scans start there. */
let t0: number;

/** The configurations table's row of `name` (its name is the row's header). */
const row = (page: Page, name: string) =>
  page.getByRole('table', { name: 'Job configurations' }).getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) });

/** The texts of a table's body rows, cell by cell (the row header first). */
const bodyRows = (table: Locator) => table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));

/** The configurations of the customer, from the API. */
const configs = async () => (await t.admin.get<{ items: JobConfig[] }>(`/${CUSTOMER}/job-configs`)).items;

/** The path of uplot's chunk in the build (esbuild's metafile). */
function uplotChunk(): string {
  const { outputs } = JSON.parse(readFileSync(join(CONSOLE_DIR, 'metafile.json'), 'utf8')) as { outputs: Record<string, { entryPoint?: string }> };
  const [file] = Object.entries(outputs).find(([, output]) => output.entryPoint?.endsWith('node_modules/uplot/dist/uPlot.esm.js')) ?? [];
  return `/assets/${basename(file!)}`;
}

/** The paths the page has requested since the test began watching. */
const requested: string[] = [];

/** Scans of a gateway that make jobs of these lengths (ms) starting at these offsets from t0, with a stray end and an item scan. */
function jobScans(gatewayId: string, jobs: [start: number, length: number][], firstId: number) {
  let n = firstId;
  return [
    scanRow(eventId(n++), gatewayId, t0 - 1000, 'END-stray'),
    ...jobs.flatMap(([start, length]) => [
      scanRow(eventId(n++), gatewayId, t0 + start, 'START-1'),
      scanRow(eventId(n++), gatewayId, t0 + start + 1000, 'ITEM-4006381333931'),
      scanRow(eventId(n++), gatewayId, t0 + start + length, 'END-1'),
    ]),
  ];
}

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  const gateways = ['Dock 1', 'Dock 2', 'Dock 3'].map((name) => ({ name, usecase: 'packing', station: name.toLowerCase().replace(' ', '-') }));
  await t.admin.post(`/${CUSTOMER}/gateways/bulk-create`, { gateways });
  const { items } = await t.admin.get<{ items: { id: string; name: string }[] }>(`/${CUSTOMER}/gateways`);
  ids = Object.fromEntries(items.map((g) => [g.name, g.id]));
  t0 = Math.floor((Date.now() - 3 * 60 * MINUTE) / MINUTE) * MINUTE;
  await insertEvents(t, CUSTOMER, [
    ...jobScans(ids['Dock 1']!, [[0, 90_000], [10 * MINUTE, 150_000], [20 * MINUTE, 75_000], [40 * MINUTE, 61_500]], 1),
    ...jobScans(ids['Dock 2']!, [[5 * MINUTE, 4 * MINUTE], [30 * MINUTE, 200_000]], 100),
  ]);
  admin = await openConsole(browser, t.url, '#/jobs');
  admin.page.on('request', (request) => requested.push(new URL(request.url()).pathname));
  await signIn(admin.page, ADMIN_EMAIL, ADMIN_PASSWORD);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('the Jobs page', () => {
  it('creates a job configuration with its gateways, showing the API\'s details when it refuses one', async () => {
    const { page } = admin;
    await page.getByRole('cell', { name: 'No job configurations yet.' }).waitFor();
    await page.getByRole('button', { name: 'New job configuration' }).click();
    const dialog = page.getByRole('dialog', { name: 'New job configuration' });
    await dialog.getByLabel('Name').fill('Packing');
    await dialog.getByLabel('Start barcode').fill('START');
    await dialog.getByLabel('End barcode').fill('END');
    await dialog.getByRole('button', { name: 'Create' }).click();
    expect(await dialog.getByRole('alert').textContent()).toBe('Body field "gateway_ids" must NOT have fewer than 1 items.');

    await dialog.getByLabel('Find gateways').fill('dock-2');
    expect(await dialog.getByRole('checkbox').evaluateAll((boxes) => boxes.map((b) => b.parentElement!.textContent))).toEqual(['Dock 2']);
    await dialog.getByRole('checkbox', { name: 'Dock 2' }).check();
    await dialog.getByLabel('Find gateways').fill('');
    await dialog.getByRole('checkbox', { name: 'Dock 1' }).check();
    // The chosen first, in the order chosen (the order of the analysis), then the others.
    expect(await dialog.getByRole('checkbox').evaluateAll((boxes) => boxes.map((b) => `${b.parentElement!.textContent}:${(b as unknown as { checked: boolean }).checked}`))).toEqual([
      'Dock 2:true',
      'Dock 1:true',
      'Dock 3:false',
    ]);
    await expectAccessible(page);
    await saveScreenshots(page, 'jobs-new');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await page.getByRole('status').filter({ hasText: 'Created' }).textContent()).toBe('Created job configuration "Packing".');
    expect((await row(page, 'Packing').getByRole('cell').allTextContents()).slice(0, 3)).toEqual(['START', 'END', 'Dock 2, Dock 1']);
    expect((await configs()).map((c) => [c.job_name, c.start_barcode, c.end_barcode, c.gateway_ids, c.version])).toEqual([
      ['Packing', 'START', 'END', [ids['Dock 2'], ids['Dock 1']], 1],
    ]);
  });

  it('analyses the seeded scans over a range: the chart of job durations, and the summary of the API\'s jobs', async () => {
    const { page } = admin;
    const [from, to] = [t0 - 5 * MINUTE, t0 + 60 * MINUTE];
    await page.getByLabel('Configuration', { exact: true }).selectOption({ label: 'Packing' });
    await page.getByLabel('From').fill(toLocalInput(from));
    await page.getByLabel('To').fill(toLocalInput(to));
    // uplot is fetched with the first chart, not with the page (nor with the console).
    expect(requested).not.toContain(uplotChunk());
    await page.getByRole('button', { name: 'Analyze' }).click();
    const chart = page.getByRole('img', { name: 'Job durations' });
    await chart.locator('canvas').waitFor();
    expect(requested).toContain(uplotChunk());

    const [packing] = await configs();
    const analysis = await t.admin.post<JobAnalysis>(`/${CUSTOMER}/job-analysis`, { job_config_id: packing!.job_config_id, start_time: from, end_time: to });
    const durations = (r: JobAnalysis['results'][number]) => r.jobs.map((j) => j.end_time - j.start_time);
    expect(analysis.results.map(durations)).toEqual([[240_000, 200_000], [90_000, 150_000, 75_000, 61_500]]);
    const summaryRow = (name: string, values: number[]) => {
      const s = summarizeDurations(values)!;
      return [name, String(s.count), formatDuration(s.median), formatDuration(s.p90), formatDuration(s.longest)];
    };
    expect(await bodyRows(page.getByRole('table', { name: 'Job summary' }))).toEqual([
      summaryRow('All gateways', analysis.results.flatMap(durations)),
      summaryRow('Dock 2', durations(analysis.results[0]!)),
      summaryRow('Dock 1', durations(analysis.results[1]!)),
    ]);
    // The figures themselves, so that a change in both the page and the summary function shows.
    expect(await bodyRows(page.getByRole('table', { name: 'Job summary' }))).toEqual([
      ['All gateways', '6', '2m 00s', '4m 00s', '4m 00s'],
      ['Dock 2', '2', '3m 40s', '4m 00s', '4m 00s'],
      ['Dock 1', '4', '1m 22s', '2m 30s', '2m 30s'],
    ]);
    expect(await page.getByRole('figure').getByRole('listitem').allTextContents()).toEqual(['Dock 2', 'Dock 1']);
    // uPlot drew both series on the canvas: pixels of the first two colours of the palette (light).
    const png = PNG.sync.read(await chart.screenshot());
    const near = (rgb: [number, number, number]) => {
      let count = 0;
      for (let i = 0; i < png.data.length; i += 4) {
        if (Math.abs(png.data[i]! - rgb[0]) + Math.abs(png.data[i + 1]! - rgb[1]) + Math.abs(png.data[i + 2]! - rgb[2]) < 40) count++;
      }
      return count;
    };
    expect(near([0x0b, 0x5c, 0xad])).toBeGreaterThan(50);
    expect(near([0xc2, 0x41, 0x0c])).toBeGreaterThan(50);
    await expectAccessible(page);
    await saveScreenshots(page, 'jobs');
  });

  it('says so when the range holds no jobs, and refuses a range that ends before it starts', async () => {
    const { page } = admin;
    await page.getByLabel('From').fill(toLocalInput(t0 + 2 * 60 * MINUTE));
    await page.getByLabel('To').fill(toLocalInput(t0 + 3 * 60 * MINUTE));
    await page.getByRole('button', { name: 'Analyze' }).click();
    expect(await page.getByRole('status').filter({ hasText: 'No jobs' }).textContent()).toBe('No jobs of Packing in this range.');
    expect(await page.getByRole('img', { name: 'Job durations' }).count()).toBe(0);
    await page.getByLabel('To').fill(toLocalInput(t0));
    await page.getByRole('button', { name: 'Analyze' }).click();
    expect(await page.getByRole('alert').textContent()).toBe('The range ends before it starts: choose a "To" after "From".');
    expect(await page.getByRole('status').filter({ hasText: 'No jobs' }).count()).toBe(0);
  });

  it('offers a USER_ROLE user the configurations and the analysis, without New, Edit or Delete', async () => {
    await t.createUser('USER_ROLE', 'reader@example.com');
    const { page, problems, close } = await openConsole(browser, t.url, '#/jobs');
    await signIn(page, 'reader@example.com', 'user-password-123');
    await row(page, 'Packing').waitFor();
    expect(await page.getByRole('table', { name: 'Job configurations' }).getByRole('columnheader').allTextContents()).toEqual([
      'Name',
      'Start barcode',
      'End barcode',
      'Gateways',
      'Updated',
    ]);
    expect(await page.getByRole('main').getByRole('button').allTextContents()).toEqual(['Refresh', 'Analyze']);
    await expectAccessible(page);
    expect(problems).toEqual([]);
    await close();
  });

  it('edits a configuration: the name, and the gateways; a change made meanwhile is refused, not overwritten', async () => {
    const { page } = admin;
    await row(page, 'Packing').getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit Packing' });
    // Someone else changes it while the dialog shows version 1.
    const [packing] = await configs();
    await t.admin.patch(`/${CUSTOMER}/job-configs/${packing!.job_config_id}`, { end_barcode: 'STOP' });
    await dialog.getByLabel('Name').fill('Packing line');
    await dialog.getByRole('button', { name: 'Save' }).click();
    expect(await dialog.getByRole('alert').textContent()).toBe(`Job configuration "${packing!.job_config_id}" has changed (it is at version 2): read it again and retry.`);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => row(page, 'Packing').getByRole('cell').nth(1).textContent()).toBe('STOP');

    await row(page, 'Packing').getByRole('button', { name: 'Edit' }).click();
    expect(await dialog.getByLabel('End barcode').inputValue()).toBe('STOP');
    await dialog.getByLabel('Name').fill('Packing line');
    await dialog.getByRole('checkbox', { name: 'Dock 2' }).uncheck();
    await dialog.getByRole('checkbox', { name: 'Dock 3' }).check();
    await expectAccessible(page);
    await saveScreenshots(page, 'jobs-edit');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await page.getByRole('status').filter({ hasText: 'Saved' }).textContent()).toBe('Saved job configuration "Packing line".');
    expect((await row(page, 'Packing line').getByRole('cell').allTextContents()).slice(0, 3)).toEqual(['START', 'STOP', 'Dock 1, Dock 3']);
    expect((await configs()).map((c) => [c.job_name, c.end_barcode, c.gateway_ids, c.version])).toEqual([['Packing line', 'STOP', [ids['Dock 1'], ids['Dock 3']], 3]]);
  });

  it('deletes a configuration after a confirmation, and Escape leaves it', async () => {
    const { page } = admin;
    await row(page, 'Packing line').getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Packing line?' });
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await row(page, 'Packing line').getByRole('button', { name: 'Delete' }).click();
    await expectAccessible(page);
    await saveScreenshots(page, 'jobs-delete');
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(await row(page, 'Packing line').count()).toBe(0);
    expect(await configs()).toEqual([]);
    // Nothing went wrong in the page but the refusals the test provoked.
    expect(admin.problems).toEqual([
      'Failed to load resource: the server responded with a status of 400 (Bad Request)',
      'Failed to load resource: the server responded with a status of 409 (Conflict)',
    ]);
  });
});
