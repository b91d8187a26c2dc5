import { randomUUID } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible, launchBrowser, openConsole, saveScreenshots, signIn, type ConsolePage } from '../helpers/browser.js';
import { GatewayClients, provisionGateway, type TestGateway } from '../helpers/mqtt.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';
import { openSse } from '../helpers/sse.js';
import { insertGateway, selectRows } from '../helpers/store-rows.js';
import { until } from '../helpers/until.js';

// The Alerts panel of the Gateways board (docs/console.md "Alerts"): the open alerts, kept current
// by the live stream with ?alerts=true, of a real serve whose evaluator runs every 50 ms.

let t: TestServer;
let browser: Browser;
let board: ConsolePage;
const devices = new GatewayClients();
let dock: TestGateway;
let client: MqttClient;

/** The panel, and its alerts' text, newest first. */
const panel = (page: Page) => page.getByRole('region', { name: 'Alerts' });
const listed = (page: Page) => panel(page).getByRole('listitem').allTextContents();

/** A scanner's battery reported over MQTT with TLS, as its gateway relays it; resolves once stored (PUBACK). */
async function battery(percent: number): Promise<void> {
  const event = { id: randomUUID(), type: 'telemetry', device_id: 'ring-7', device_battery: percent };
  await client.publishAsync(dock.topic, JSON.stringify(event), { qos: 1 });
}

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer({ alertIntervalMs: 50 }), launchBrowser()]);
  dock = await provisionGateway(t, { name: 'Dock 1', station: 'dock-1' });
  client = await devices.connect(dock);
  await t.admin.post(`/${CUSTOMER}/alert-rules`, { kind: 'device_low_battery', below_percent: 20 });
  board = await openConsole(browser, t.url, '#/gateways');
  await signIn(board.page, ADMIN_EMAIL, ADMIN_PASSWORD);
});
afterAll(async () => {
  await devices.endAll();
  await browser?.close();
  await t?.close();
});

describe('the Alerts panel of the Gateways board', () => {
  it('says in one line that no alert is open', async () => {
    await expect.poll(() => panel(board.page).textContent()).toBe('AlertsNo open alerts.');
    await saveScreenshots(board.page, 'gateways-no-alerts');
  });

  it('shows an alert as it opens on a real MQTT publish, and drops it as it resolves', async () => {
    const { page } = board;
    await battery(12);
    await expect.poll(() => listed(page), { timeout: 5000 }).toEqual(['Low battery Scanner ring-7 opened just nowBattery at 12 %, below 20 %; last heard through Dock 1']);
    await expectAccessible(page);
    await saveScreenshots(page, 'gateways-alert');
    // 5 points above the threshold resolves it (docs/alerts.md).
    await battery(30);
    await expect.poll(() => panel(page).textContent(), { timeout: 5000 }).toBe('AlertsNo open alerts.');
    expect(board.problems).toEqual([]);
  });

  it('lists the alerts open when the board opens, a gateway by its name, newest first, and follows them', async () => {
    const quiet = await insertGateway(t, CUSTOMER, 'Ramp 7');
    await selectRows(t, 'UPDATE gateways SET last_message = ? WHERE id = ?', Date.now() - 71_000, quiet);
    await t.admin.post(`/${CUSTOMER}/alert-rules`, { kind: 'gateway_offline', after_seconds: 60, gateway_ids: [quiet] });
    await until(() => t.admin.get<{ items: object[] }>(`/${CUSTOMER}/alerts?state=OPEN`), (list) => list.items.length === 1);
    const { page, problems, close } = await openConsole(browser, t.url, '#/gateways');
    try {
      await signIn(page, ADMIN_EMAIL, ADMIN_PASSWORD);
      await expect.poll(() => listed(page)).toEqual([expect.stringMatching(/^Gateway offline Ramp 7 opened just nowNo message for over 60 s; the last at .+$/)]);
      // A second alert, opened while the board is shown, goes first.
      await battery(9);
      await expect
        .poll(() => listed(page), { timeout: 5000 })
        .toEqual(['Low battery Scanner ring-7 opened just nowBattery at 9 %, below 20 %; last heard through Dock 1', expect.stringMatching(/^Gateway offline Ramp 7 /)]);
      await expectAccessible(page);
      await saveScreenshots(page, 'gateways-alerts');
      // The gateway speaks again: its alert resolves and leaves.
      await selectRows(t, 'UPDATE gateways SET last_message = ? WHERE id = ?', Date.now(), quiet);
      await expect.poll(() => listed(page), { timeout: 5000 }).toEqual(['Low battery Scanner ring-7 opened just nowBattery at 9 %, below 20 %; last heard through Dock 1']);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it('shows the open alerts and why they are not updating when the stream is refused, and goes live once a place is free', async () => {
    const user = await t.createUser('USER_ROLE', 'streams@example.com');
    // A user may hold 10 streams on an instance (docs/events.md): the board's is the 11th.
    const held = await Promise.all(Array.from({ length: 10 }, () => openSse(t.url, `/${CUSTOMER}/events/stream`, { token: user.token })));
    const { page, problems, close } = await openConsole(browser, t.url, '#/gateways');
    try {
      await signIn(page, 'streams@example.com', 'user-password-123');
      await expect.poll(() => listed(page)).toEqual(['Low battery Scanner ring-7 opened just nowBattery at 9 %, below 20 %; last heard through Dock 1']);
      expect(await panel(page).getByRole('alert').textContent()).toBe(
        'You have 10 live event streams open on this server, as many as a user may: close one (or reuse it with a gateway filter on the client\'s side) before opening another.',
      );
      await expectAccessible(page);
      held.pop()!.close();
      // The panel tries again after 0.25, 1, 2, then every 5 s; once live, it follows the alerts again.
      await expect.poll(() => panel(page).getByRole('alert').count(), { timeout: 15_000 }).toBe(0);
      await battery(40);
      await expect.poll(() => panel(page).textContent(), { timeout: 5000 }).toBe('AlertsNo open alerts.');
      expect(new Set(problems)).toEqual(new Set(['Failed to load resource: the server responded with a status of 429 (Too Many Requests)']));
    } finally {
      held.forEach((connection) => connection.close());
      await close();
    }
  });

  it('lists five alerts and the rest on Show all', async () => {
    const { page } = board;
    // One message of a gateway flushing its buffer: six scanners low at once.
    const events = [1, 2, 3, 4, 5, 6].map((n) => ({ id: randomUUID(), type: 'telemetry', device_id: `ring-${10 + n}`, device_battery: n }));
    await client.publishAsync(dock.topic, JSON.stringify(events), { qos: 1 });
    await expect.poll(() => listed(page), { timeout: 5000 }).toHaveLength(5);
    await page.getByRole('button', { name: 'Show all 6' }).click();
    expect((await listed(page)).map((text) => text.split(' opened')[0]).sort()).toEqual([11, 12, 13, 14, 15, 16].map((n) => `Low battery Scanner ring-${n}`));
    await page.getByRole('button', { name: 'Show fewer' }).click();
    expect(await listed(page)).toHaveLength(5);
    expect(board.problems).toEqual([]);
  });
});
