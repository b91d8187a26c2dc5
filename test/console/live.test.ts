import { randomUUID } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible, launchBrowser, openConsole, saveScreenshots, signIn, type ConsolePage } from '../helpers/browser.js';
import { GatewayClients, provisionGateway, type TestGateway } from '../helpers/mqtt.js';
import { openSse } from '../helpers/sse.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;
let browser: Browser;
let admin: ConsolePage;
const devices = new GatewayClients();
const gateways: { dock: TestGateway; ramp: TestGateway } = {} as never;
const clients: { dock: MqttClient; ramp: MqttClient } = {} as never;

/** Publishes a scan as the gateway's device would, over MQTT with TLS, and waits for its PUBACK (stored). */
async function publishScan(gateway: 'dock' | 'ramp', code: string): Promise<void> {
  const event = { id: randomUUID(), type: 'scan', scan_code: code, scan_decode_symbology: 'EAN_13', device_id: `${gateway}-scanner` };
  await clients[gateway].publishAsync(gateways[gateway].topic, JSON.stringify(event), { qos: 1 });
}

/** The scan codes in the table, top to bottom. */
const codes = (page: Page) => page.getByRole('table', { name: 'Scans' }).getByRole('rowheader').allTextContents();

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  gateways.dock = await provisionGateway(t, { name: 'Dock 1', station: 'dock-1' });
  gateways.ramp = await provisionGateway(t, { name: 'Ramp 2', station: 'ramp-2' });
  clients.dock = await devices.connect(gateways.dock);
  clients.ramp = await devices.connect(gateways.ramp);
  admin = await openConsole(browser, t.url, '#/live');
  await signIn(admin.page, ADMIN_EMAIL, ADMIN_PASSWORD);
  await admin.page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
});
afterAll(async () => {
  await devices.endAll();
  await browser?.close();
  await t?.close();
});

describe('the Live page', () => {
  it('shows a scan published over MQTT within 2 s, newest first, with its gateway and scanner', async () => {
    const { page } = admin;
    await page.getByText('No scan since the page opened: they appear here as gateways send them.').waitFor();
    expect(await page.getByRole('table').count()).toBe(0);
    const published = Date.now();
    await publishScan('dock', '4006381333931');
    await page.getByRole('rowheader', { name: '4006381333931' }).waitFor({ timeout: 2000 });
    // From the device's publish to the row on the screen (the page renders new scans every 250 ms).
    expect(Date.now() - published).toBeLessThan(2000);
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: '4006381333931' }) });
    expect(await row.getByRole('cell').allTextContents()).toEqual([expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3}$/), 'Dock 1', 'dock-1', 'dock-scanner', 'EAN_13']);

    for (const code of ['SCAN-2', 'SCAN-3', 'SCAN-4']) await publishScan(code === 'SCAN-3' ? 'ramp' : 'dock', code);
    await expect.poll(() => codes(page)).toEqual(['SCAN-4', 'SCAN-3', 'SCAN-2', '4006381333931']);
    // The count, and the rate of the seconds just past: at most the four scans in one second.
    await expect.poll(() => page.getByText(/a second now/).textContent(), { timeout: 5000 }).toMatch(/^4 scans since the page opened; \d a second now, at most [1-4] in the last 5 minutes$/);
    await page.getByRole('img', { name: 'Scans a second over the last 5 minutes' }).waitFor();
    await expectAccessible(page);
    await saveScreenshots(page, 'live');
  });

  it('freezes the table on Pause, counting what arrives, and shows the newest on Resume', async () => {
    const { page } = admin;
    await page.getByRole('button', { name: 'Pause' }).click();
    await publishScan('dock', 'WHILE-PAUSED-1');
    await publishScan('ramp', 'WHILE-PAUSED-2');
    await page.getByText('2 new scans since the pause: Resume shows the newest.').waitFor();
    expect(await codes(page)).toEqual(['SCAN-4', 'SCAN-3', 'SCAN-2', '4006381333931']);
    expect(await page.getByRole('status').filter({ hasText: 'Paused' }).count()).toBe(1);
    await saveScreenshots(page, 'live-paused');

    await page.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => codes(page)).toEqual(['WHILE-PAUSED-2', 'WHILE-PAUSED-1', 'SCAN-4', 'SCAN-3', 'SCAN-2', '4006381333931']);
    await page.getByRole('button', { name: 'Pause' }).waitFor();
  });

  it('keeps to one gateway when filtered, and to every gateway again from now on', async () => {
    const { page } = admin;
    await page.getByLabel('Gateway').selectOption({ label: 'Ramp 2' });
    expect(await codes(page)).toEqual(['WHILE-PAUSED-2', 'SCAN-3']);
    expect(await page.getByText(/a second now/).textContent()).toMatch(/^0 scans since the gateway was chosen; /);
    await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
    // Committed in this order: when the ramp's scan is shown, the dock's would have been too.
    await publishScan('dock', 'DOCK-FILTERED-OUT');
    await publishScan('ramp', 'RAMP-SHOWN');
    await expect.poll(() => codes(page)).toEqual(['RAMP-SHOWN', 'WHILE-PAUSED-2', 'SCAN-3']);

    await page.getByLabel('Gateway').selectOption({ label: 'All gateways' });
    await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
    await publishScan('dock', 'DOCK-AGAIN');
    await expect.poll(() => codes(page)).toEqual(['DOCK-AGAIN', 'RAMP-SHOWN', 'WHILE-PAUSED-2', 'SCAN-3']);
    expect(admin.problems).toEqual([]);
  });

  it('keeps the newest 200 scans only', async () => {
    const { page } = admin;
    const codesSent = Array.from({ length: 230 }, (_, i) => `BULK-${String(i).padStart(3, '0')}`);
    // One message carrying many events, as a gateway flushing its buffer sends them.
    const events = codesSent.map((code) => ({ id: randomUUID(), type: 'scan', scan_code: code, device_id: 'dock-scanner' }));
    await clients.dock.publishAsync(gateways.dock.topic, JSON.stringify(events), { qos: 1 });
    await expect.poll(() => codes(page)).toEqual(codesSent.slice(30).reverse());
    expect(admin.problems).toEqual([]);
  });

  it('shows the API\'s details when the stream is refused, and goes live once a place is free', async () => {
    const user = await t.createUser('USER_ROLE', 'streams@example.com');
    // A user may hold 10 streams on an instance (DESIGN.md "Least privilege and secrets"): the page's is the 11th.
    const held = await Promise.all(Array.from({ length: 10 }, () => openSse(t.url, `/${CUSTOMER}/events/stream`, { token: user.token })));
    expect(held.map((connection) => connection.status)).toEqual(Array.from({ length: 10 }, () => 200));
    const { page, problems, close } = await openConsole(browser, t.url, '#/live');
    try {
      await signIn(page, 'streams@example.com', 'user-password-123');
      await expect
        .poll(() => page.getByRole('alert').textContent())
        .toBe('You have 10 live event streams open on this server, as many as a user may: close one (or reuse it with a gateway filter on the client\'s side) before opening another.');
      expect(await page.getByRole('status').textContent()).toBe('Reconnecting…');
      await expectAccessible(page);
      await saveScreenshots(page, 'live-refused');
      held.pop()!.close();
      // The page tries again after 0.25, 1, 2, then every 5 s.
      await page.getByRole('status').filter({ hasText: 'Live' }).waitFor({ timeout: 15_000 });
      expect(await page.getByRole('alert').count()).toBe(0);
      await publishScan('ramp', 'AFTER-REFUSAL');
      await page.getByRole('rowheader', { name: 'AFTER-REFUSAL' }).waitFor();
      // Each refused try is one failed request in the page's log, and nothing else went wrong.
      expect(new Set(problems)).toEqual(new Set(['Failed to load resource: the server responded with a status of 429 (Too Many Requests)']));
    } finally {
      held.forEach((connection) => connection.close());
      await close();
    }
  });
});
