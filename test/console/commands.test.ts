// Commands in the console (docs/console.md "Commands"): the gateway page `#/gateways/{id}` sends
// feedback to a real gateway over MQTT and follows it QUEUED/DELIVERED -> SUCCEEDED without a
// reload, then stops reading; a QUEUED command of an offline gateway is canceled; the API's details
// show; the Scanners page's Command column sends through the scanner's gateway, naming the scanner;
// a user without gateway.command is offered neither.
import { randomUUID } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiError } from '../../src/client/api.js';
import type { ApiCommand } from '../../src/domain/commands.js';
import { expectAccessible, launchBrowser, openConsole, saveScreenshots, signIn, type ConsolePage } from '../helpers/browser.js';
import { GatewayClients, provisionGateway, type TestGateway } from '../helpers/mqtt.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

let t: TestServer;
let browser: Browser;
let admin: ConsolePage;
/** Dock 1: provisioned, connected and subscribed to its command topic. */
let dock1: TestGateway;
let client: MqttClient;
/** Dock 2: never provisioned, so its commands stay QUEUED. */
let dock2: { id: string };
/** What Dock 1 received on its command topic, in order. */
const received: { command_id: string; name: string; device_id?: string; parameters: unknown }[] = [];
const devices = new GatewayClients();
/** A state change shows at the page's next reading, a second apart (COMMAND_POLL_MS), not within expect.poll's default second. */
const LIVE = { timeout: 5000 };

/** A row of the table named `table` whose header (its first cell) is `name`. */
const rows = (page: Page, table: string, name: string) =>
  page.getByRole('table', { name: table }).getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) });
/** The command's row on the gateway page: the newest row of that name. */
const commandRow = (page: Page, name: string) => rows(page, 'Sent commands', name).first();
/** The cells after the row's header: Status, Scanner, Parameters, Created, Delivered, Completed, Details, Actions. */
const cells = (page: Page, name: string) => commandRow(page, name).getByRole('cell').allTextContents();
const statusOf = async (page: Page, name: string) => (await cells(page, name))[0];
const respond = (command_id: string, status: 'SUCCEEDED' | 'FAILED', details: string) =>
  client.publishAsync(`${dock1.topic}/command-responses`, JSON.stringify({ command_id, status, details }), { qos: 1 });

/** Makes the page believe its tab was hidden or shown again (the Page Visibility API), as switching tabs does. */
const setVisibility = (page: Page, state: 'hidden' | 'visible') =>
  page.evaluate(`Object.defineProperty(document, 'visibilityState', { value: '${state}', configurable: true });
    document.dispatchEvent(new Event('visibilitychange'));`);

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  dock1 = await provisionGateway(t, { name: 'Dock 1', usecase: 'picking', station: 'dock-1' });
  dock2 = await t.admin.post<{ id: string }>(`/${CUSTOMER}/gateways`, { name: 'Dock 2', usecase: 'packing', station: 'dock-2' });
  client = await devices.connect(dock1);
  // mqtt.js answers PUBACK after this handler: the command is DELIVERED; the test answers it when it wants.
  client.on('message', (_topic, payload) => received.push(JSON.parse(payload.toString())));
  await client.subscribeAsync(`${dock1.topic}/commands`, { qos: 1 });
  // ring-7's newest event comes through Dock 1: the Scanners page sends its commands there.
  await client.publishAsync(dock1.topic, JSON.stringify({ id: randomUUID(), type: 'scan', scan_code: '4006381333931', device_id: 'ring-7' }), { qos: 1 });
  await until(async () => (await t.admin.get<{ items: unknown[] }>(`/${CUSTOMER}/devices`)).items.length === 1, { what: 'ring-7 stored' });
  admin = await openConsole(browser, t.url, '#/gateways');
  await signIn(admin.page, ADMIN_EMAIL, ADMIN_PASSWORD);
});
afterAll(async () => {
  await devices.endAll();
  await browser?.close();
  await t?.close();
});

describe('the gateway page', () => {
  it('opens from the gateway\'s name on the board and shows its details', async () => {
    const { page } = admin;
    await page.getByRole('link', { name: 'Dock 1', exact: true }).click();
    await page.getByRole('heading', { name: 'Dock 1', level: 1 }).waitFor();
    expect(page.url()).toBe(`${t.url}/#/gateways/${dock1.id}`);
    expect(await page.locator('.gateway-details dt').allTextContents()).toEqual(['Status', 'Last seen', 'Station', 'Use case', 'Id']);
    expect(await page.locator('.gateway-details dd').allTextContents()).toEqual(['Active', 'just now', 'dock-1', 'picking', dock1.id]);
    expect(await page.getByRole('region', { name: 'Commands' }).getByRole('button', { name: 'Send command' }).count()).toBe(1);
    expect(await page.getByRole('table', { name: 'Sent commands' }).getByRole('cell').allTextContents()).toEqual(['No commands sent to this gateway yet.']);
  });

  it('sends feedback to a scanner through the gateway over MQTT and follows it to SUCCEEDED, then stops reading', async () => {
    const { page } = admin;
    const region = page.getByRole('region', { name: 'Commands' });
    await region.getByLabel('Sequence').selectOption('NOK');
    await region.getByLabel('Scanner').fill('ring-7');
    await region.getByLabel('Time to live').selectOption({ label: '10 minutes' });
    await region.getByRole('button', { name: 'Send command' }).click();
    await until(() => received.length === 1, { what: 'the command over MQTT' });
    const [sent] = received;
    expect(sent).toEqual({ command_id: sent!.command_id, name: 'feedback', device_id: 'ring-7', parameters: { sequence: 'NOK' }, created: expect.any(Number), expires_at: expect.any(Number) });
    const stored = await t.admin.get<ApiCommand>(`/${CUSTOMER}/commands/${sent!.command_id}`);
    expect(stored.expires_at - stored.created).toBe(600_000);
    expect(await region.getByRole('status').first().textContent()).toBe('Sent feedback (NOK) to ring-7.');
    // Delivered once the gateway's PUBACK is stored: the page shows it without a reload.
    await expect.poll(() => statusOf(page, 'feedback'), LIVE).toBe('Delivered');
    expect((await cells(page, 'feedback')).slice(1, 3)).toEqual(['ring-7', 'NOK']);
    expect((await cells(page, 'feedback'))[4]).not.toBe('—');
    expect((await cells(page, 'feedback'))[5]).toBe('—');

    await respond(sent!.command_id, 'SUCCEEDED', 'beeped twice');
    await expect.poll(() => statusOf(page, 'feedback'), LIVE).toBe('Succeeded');
    const done = await cells(page, 'feedback');
    expect(done[5]).not.toBe('—');
    expect(done.slice(6)).toEqual(['beeped twice', '']);

    // Every command shown is final: the page reads the list no more.
    const reads: string[] = [];
    page.on('request', (request) => request.url().includes('/commands') && reads.push(request.url()));
    await page.waitForTimeout(2500);
    expect(reads).toEqual([]);
    await expectAccessible(page);
    await saveScreenshots(page, 'gateway');
  });

  it('cancels a QUEUED command of a gateway that is offline, and shows the API\'s details when it refuses one', async () => {
    const { page } = admin;
    await page.goto(`${t.url}/#/gateways/${dock2.id}`);
    await page.getByRole('heading', { name: 'Dock 2', level: 1 }).waitFor();
    const region = page.getByRole('region', { name: 'Commands' });
    await region.getByLabel('Command', { exact: true }).selectOption('display');
    await region.getByLabel('Template').fill('pick');
    await region.getByLabel('Fields').fill('qty 3');
    await region.getByRole('button', { name: 'Send command' }).click();
    expect(await region.getByRole('alert').textContent()).toBe('Line 1 of Fields, "qty 3", is not key=value: write one field a line, such as qty=3.');
    // Over the API's 16 KiB of parameters: its details sentence, as it says it.
    await region.getByLabel('Fields').fill(`note=${'x'.repeat(17_000)}`);
    await region.getByRole('button', { name: 'Send command' }).click();
    await expect.poll(() => region.getByRole('alert').textContent()).toContain('16');
    const refusal = await t.admin
      .post(`/${CUSTOMER}/gateways/${dock2.id}/commands`, { name: 'display', parameters: { template: 'pick', fields: { note: 'x'.repeat(17_000) } }, ttl_seconds: 3600 })
      .catch((error: ApiError) => error);
    expect(await region.getByRole('alert').textContent()).toBe((refusal as ApiError).details);

    await region.getByLabel('Fields').fill('qty=3\n\nbin = A-7');
    await region.getByRole('button', { name: 'Send command' }).click();
    await expect.poll(() => cells(page, 'display'), LIVE).toEqual(['Queued', 'the gateway', 'pick: qty=3, bin=A-7', expect.any(String), '—', '—', '', 'Cancel']);
    // QUEUED: read every second while the tab is shown, not at all while it is hidden.
    const reads: string[] = [];
    page.on('request', (request) => request.url().includes('/commands') && reads.push(request.url()));
    await setVisibility(page, 'hidden');
    reads.splice(0);
    await page.waitForTimeout(2500);
    expect(reads).toEqual([]);
    await setVisibility(page, 'visible');
    await until(() => reads.length >= 2, { what: 'two readings once shown again', timeoutMs: 5000 });
    expect(reads[0]).toBe(`${t.url}/${CUSTOMER}/gateways/${dock2.id}/commands?limit=20`);

    await commandRow(page, 'display').getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => statusOf(page, 'display'), LIVE).toBe('Canceled');
    expect(await region.getByRole('status').last().textContent()).toBe('Canceled display (pick: qty=3, bin=A-7).');
    expect((await cells(page, 'display'))[7]).toBe('');
    const { items } = await t.admin.get<{ items: ApiCommand[] }>(`/${CUSTOMER}/gateways/${dock2.id}/commands`);
    expect(items.map((c) => [c.name, c.status, c.parameters])).toEqual([['display', 'CANCELED', { template: 'pick', fields: { qty: '3', bin: 'A-7' } }]]);
    await expectAccessible(page);
    await saveScreenshots(page, 'gateway-commands');
    // The one refusal the test provoked, and nothing else.
    expect(admin.problems.splice(0)).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
  });
});

describe('a gateway page of no gateway', () => {
  it('says what the API says, with the link back to the board', async () => {
    const { page } = admin;
    const missing = randomUUID();
    await page.goto(`${t.url}/#/gateways/${missing}`);
    const refusal = await t.admin.get(`/${CUSTOMER}/gateways/${missing}`).catch((error: ApiError) => error);
    await expect.poll(() => page.getByRole('alert').textContent()).toBe((refusal as ApiError).details);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Gateway');
    expect(await page.getByRole('link', { name: 'All gateways' }).getAttribute('href')).toBe('#/gateways');
    expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Gateways' }).getAttribute('aria-current')).toBe('page');
    expect(admin.problems.splice(0)).toEqual(['Failed to load resource: the server responded with a status of 404 (Not Found)']);
  });
});

describe('the Scanners page\'s Command column', () => {
  it('sends a command to a scanner through the gateway of its newest event and shows its state as it changes', async () => {
    const { page } = admin;
    await page.goto(`${t.url}/#/scanners`);
    await page.getByRole('button', { name: 'Send command to ring-7' }).click();
    const dialog = page.getByRole('dialog', { name: 'Send a command to ring-7' });
    expect(await dialog.getByLabel('Scanner').inputValue()).toBe('ring-7');
    expect(await dialog.locator('.dialog-body').textContent()).toBe('Through the gateway of its newest event, Dock 1.');
    await expectAccessible(page);
    await saveScreenshots(page, 'scanners-command-dialog');
    // Escape closes it, the focus back on the row's button; Enter opens it again.
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(() => page.evaluate("document.activeElement.getAttribute('aria-label')")).toBe('Send command to ring-7');
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await dialog.getByLabel('Sequence').selectOption('WARNING');
    await dialog.getByRole('button', { name: 'Send command' }).click();
    await dialog.waitFor({ state: 'detached' });
    await until(() => received.length === 2, { what: 'the second command over MQTT' });
    const sent = received[1]!;
    expect([sent.name, sent.device_id, sent.parameters]).toEqual(['feedback', 'ring-7', { sequence: 'WARNING' }]);
    const cell = rows(page, 'Scanners', 'ring-7').getByRole('cell').last();
    await expect.poll(() => cell.textContent(), LIVE).toBe('Send commandfeedback Delivered');
    await respond(sent.command_id, 'FAILED', 'no display');
    await expect.poll(() => cell.textContent(), LIVE).toBe('Send commandfeedback Failed');
    expect(await page.getByRole('status').first().textContent()).toBe('Sent feedback (WARNING) to ring-7.');
    await expectAccessible(page);
    await saveScreenshots(page, 'scanners-commands');
    expect(admin.problems).toEqual([]);
  });
});

describe('a user without gateway.command', () => {
  it('sees the gateway page without the form or the commands, and no Command column', async () => {
    await t.createUser('USER_ROLE', 'reader@example.com');
    const { page, problems, close } = await openConsole(browser, t.url, `#/gateways/${dock1.id}`);
    await signIn(page, 'reader@example.com', 'user-password-123');
    await page.getByRole('heading', { name: 'Dock 1', level: 1 }).waitFor();
    const region = page.getByRole('region', { name: 'Commands' });
    expect(await region.textContent()).toBe('CommandsYour role does not allow sending commands or reading them (it needs the permission gateway.command); ask an administrator.');
    expect(await page.getByRole('main').getByRole('button').allTextContents()).toEqual(['Refresh']);
    await page.getByRole('link', { name: 'Scanners' }).click();
    await rows(page, 'Scanners', 'ring-7').waitFor();
    expect(await page.getByRole('columnheader').allTextContents()).toEqual(['Scanner', 'Status', 'Battery', 'Last seen', 'Gateway', 'Firmware']);
    expect(await page.getByRole('button', { name: 'Send command to ring-7' }).count()).toBe(0);
    expect(problems).toEqual([]);
    await close();
  });
});
