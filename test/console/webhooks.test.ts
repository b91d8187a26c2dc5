import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhooks.js';
import { openAdminSection, refused, row } from '../helpers/admin-page.js';
import { expectAccessible, launchBrowser, openConsole, saveScreenshots, signIn, type ConsolePage } from '../helpers/browser.js';
import { eventRow } from '../helpers/events.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';
import { insertEvents } from '../helpers/store-rows.js';
import { until } from '../helpers/until.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

// The Admin page's Webhooks section (docs/console.md "Webhooks"): a real serve that may deliver to
// loopback, a real receiver that verifies every message with the standardwebhooks package.

let t: TestServer;
let browser: Browser;
let admin: ConsolePage;
const receiver = new WebhookReceiver();
/** Scans stored half an hour ago, before the webhook existed: only a replay sends them. */
let earlier: string[];

/** The cells of the deliveries' rows, top (newest) to bottom, the type (the row's header) first. */
const deliveries = (page: Page) =>
  page.getByRole('table', { name: 'Deliveries' }).locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent ?? '')));

/** The message the receiver took last, of the given type. */
const lastOf = (type: string) => receiver.messages.filter((m) => m.body.type === type).at(-1)!;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer({ webhookAllowLoopback: true }), launchBrowser(), receiver.start()]);
  const rows = [1, 2, 3].map((i) => eventRow({ created: Date.now() - 1_800_000 + i, scan_code: `EARLIER-${i}`, device_id: 'ring-1' }));
  await insertEvents(t, CUSTOMER, rows);
  earlier = rows.map((r) => r.id);
  admin = await openConsole(browser, t.url, '#/admin/webhooks');
  await signIn(admin.page, ADMIN_EMAIL, ADMIN_PASSWORD);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await receiver.stop();
});

describe('the Admin page: webhooks', () => {
  it('shows the API\'s details for a refused URL, creates a webhook, and shows its secret once', async () => {
    const { page } = admin;
    await page.getByRole('heading', { name: 'Webhooks', level: 2 }).waitFor();
    await expect.poll(() => page.getByRole('table', { name: 'Webhooks' }).getByRole('cell').allTextContents()).toEqual(['No webhooks.']);
    await page.getByRole('button', { name: 'New webhook' }).click();
    const dialog = page.getByRole('dialog', { name: 'New webhook' });
    // Every type the API takes, none chosen.
    await dialog.getByRole('group', { name: 'Events' }).waitFor();
    const boxes = dialog.getByRole('group', { name: 'Events' }).getByRole('checkbox');
    expect(await boxes.evaluateAll((inputs) => inputs.map((i) => [i.parentElement!.textContent, (i as unknown as { checked: boolean }).checked]))).toEqual(
      WEBHOOK_EVENT_TYPES.map((type) => [type, false]),
    );
    // Link-local is refused even where loopback is allowed (docs/webhooks.md "URLs").
    await dialog.getByLabel('URL').fill('http://169.254.169.254/hook');
    await dialog.getByRole('checkbox', { name: 'event.scan' }).check();
    await dialog.getByRole('button', { name: 'Create' }).click();
    expect(await dialog.getByRole('alert').textContent()).toBe('Body field "url" is refused: 169.254.169.254 is link-local.');
    await dialog.getByLabel('URL').fill(receiver.url);
    await dialog.getByRole('checkbox', { name: 'alert.opened' }).check();
    await dialog.getByLabel('Description').fill('Dispatch system');
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-new-webhook');
    await dialog.getByRole('button', { name: 'Create' }).click();

    const shown = page.getByRole('dialog', { name: 'Webhook secret' });
    const secret = await shown.getByLabel('Secret').inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    receiver.secrets = [secret];
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-webhook-secret');
    await shown.getByRole('button', { name: 'Done' }).click();
    await shown.waitFor({ state: 'detached' });

    expect(await row(page, receiver.url).getByRole('cell').allTextContents()).toEqual(['event.scan, alert.opened', 'Enabled', 'Dispatch system']);
    const listed = await t.admin.get<{ items: object[] }>(`/${CUSTOMER}/webhooks`);
    expect(listed.items).toEqual([expect.objectContaining({ url: receiver.url, event_types: ['event.scan', 'alert.opened'], description: 'Dispatch system', enabled: true })]);
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-webhooks');
    // Never again: not on the page, nor after a reload.
    expect(await page.content()).not.toContain(secret);
    await page.reload();
    await row(page, receiver.url).waitFor();
    expect(await page.content()).not.toContain(secret);
    expect(admin.problems).toEqual([refused('400 (Bad Request)')]);
    admin.problems.length = 0;
  });

  it('is used by keyboard alone: the dialog takes the focus and gives it back on Escape, the URL opens the webhook', async () => {
    const { page } = admin;
    await page.getByRole('button', { name: 'New webhook' }).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'New webhook' });
    await expect.poll(() => page.evaluate('document.activeElement?.labels?.[0]?.textContent')).toBe('URL');
    await page.keyboard.type('https://example.com/hook');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    expect(await dialog.getByRole('checkbox', { name: 'event.scan' }).isChecked()).toBe(true);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(() => page.evaluate('document.activeElement.textContent')).toBe('New webhook');
    await page.getByRole('link', { name: receiver.url }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: receiver.url, level: 3 }).waitFor();
    await page.getByRole('link', { name: 'All webhooks' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'New webhook' }).waitFor();
    expect(admin.problems).toEqual([]);
  });

  it('Send test: the receiver gets a verified webhook.test, and the deliveries show it succeeded with its latency', async () => {
    const { page } = admin;
    await page.getByRole('link', { name: receiver.url }).click();
    await page.getByRole('heading', { name: receiver.url, level: 3 }).waitFor();
    await expect.poll(() => deliveries(page)).toEqual([['No deliveries yet: Send test sends one.']]);
    await page.getByRole('button', { name: 'Send test' }).click();
    await receiver.waitFor((r) => r.messages.some((m) => m.body.type === 'webhook.test'));
    const message = lastOf('webhook.test');
    expect(message.verifiedBy).toEqual([0]);
    // The table follows the delivery until it is no longer pending, without Refresh.
    await expect
      .poll(() => deliveries(page), { timeout: 5000 })
      .toEqual([['webhook.test', 'Succeeded', '200', expect.stringMatching(/^\d+ ms$/), '1', '—', expect.any(String), message.id]]);
    expect(await page.getByRole('status').filter({ hasText: 'Queued' }).textContent()).toBe('Queued a test message (webhook.test): its delivery is listed below.');
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-webhook');
    expect(admin.problems).toEqual([]);
  });

  it('Replay sends the events since the time given again; a time still to come is refused', async () => {
    const { page } = admin;
    await page.getByRole('button', { name: 'Replay' }).click();
    const dialog = page.getByRole('dialog', { name: 'Replay events' });
    await dialog.getByLabel('Since').fill('2099-01-01T00:00');
    await dialog.getByRole('button', { name: 'Replay' }).click();
    // Refused before asking the API, in the dialog's words rather than the API's milliseconds.
    expect(await dialog.getByRole('alert').textContent()).toMatch(/^Since \(.*2099.*\) is still to come: give a past date and time\.$/);
    // An hour ago, as the dialog proposes: the scans of half an hour ago go again.
    await dialog.getByLabel('Since').fill(new Date(Date.now() - 3_600_000 - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16));
    await expectAccessible(page);
    await saveScreenshots(page, 'admin-webhook-replay');
    await dialog.getByRole('button', { name: 'Replay' }).click();
    await dialog.waitFor({ state: 'detached' });
    await receiver.waitFor((r) => r.events().length >= 3);
    expect(receiver.events().map((e) => e.id)).toEqual(earlier);
    await expect.poll(() => deliveries(page).then((rows) => rows.map((r) => [r[0], r[1]])), { timeout: 5000 }).toEqual([
      ['event.batch', 'Succeeded'],
      ['webhook.test', 'Succeeded'],
    ]);
    expect(admin.problems).toEqual([]);
  });

  it('Rotate secret shows the new secret once, and both secrets sign the next message', async () => {
    const { page } = admin;
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const confirm = page.getByRole('dialog', { name: 'Rotate the secret?' });
    await expectAccessible(page);
    await confirm.getByRole('button', { name: 'Rotate secret' }).click();
    const shown = page.getByRole('dialog', { name: 'New webhook secret' });
    const secret = await shown.getByLabel('Secret').inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secret).not.toBe(receiver.secrets[0]);
    receiver.secrets = [receiver.secrets[0]!, secret];
    await shown.getByRole('button', { name: 'Done' }).click();
    await shown.waitFor({ state: 'detached' });
    expect(await page.content()).not.toContain(secret);
    const before = receiver.messages.length;
    await page.getByRole('button', { name: 'Send test' }).click();
    await receiver.waitFor((r) => r.messages.length > before);
    expect(lastOf('webhook.test').verifiedBy).toEqual([0, 1]);
    expect(admin.problems).toEqual([]);
  });

  it('Disable and Enable change the webhook; Delete, once confirmed, removes it', async () => {
    const { page } = admin;
    const id = new URL(page.url().replace('#', '')).searchParams.get('webhook')!;
    const enabled = async () => (await t.admin.get<{ enabled: boolean }>(`/${CUSTOMER}/webhooks/${id}`)).enabled;
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    expect([await page.locator('.webhook-details dd').nth(1).textContent(), await enabled()]).toEqual(['Disabled', false]);
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Disable' }).waitFor();
    expect([await page.locator('.webhook-details dd').nth(1).textContent(), await enabled()]).toEqual(['Enabled', true]);

    await page.getByRole('button', { name: 'Delete' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete the webhook?' });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    expect(await enabled()).toBe(true);
    await page.getByRole('button', { name: 'Delete' }).click();
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => page.getByRole('table', { name: 'Webhooks' }).getByRole('cell').allTextContents()).toEqual(['No webhooks.']);
    expect(await page.getByRole('status').filter({ hasText: 'Deleted' }).textContent()).toBe(`Deleted the webhook to ${receiver.url}.`);
    expect((await t.admin.get<{ items: object[] }>(`/${CUSTOMER}/webhooks`)).items).toEqual([]);
    expect(admin.problems).toEqual([]);
    await openAdminSection(page, 'Users');
  });

  it('says why the service disabled a webhook, and Enable resumes it', async () => {
    const { page } = admin;
    const gone = await new WebhookReceiver().start();
    try {
      gone.answer = () => 410;
      const created = await t.admin.post<{ webhook_id: string; secret: string }>(`/${CUSTOMER}/webhooks`, { url: gone.url, event_types: ['event.scan'] });
      gone.secrets = [created.secret];
      await t.admin.post(`/${CUSTOMER}/webhooks/${created.webhook_id}/test`);
      await until(() => t.admin.get<{ enabled: boolean }>(`/${CUSTOMER}/webhooks/${created.webhook_id}`), (w) => !w.enabled);
      await openAdminSection(page, 'Webhooks');
      await expect.poll(() => row(page, gone.url).getByRole('cell').allTextContents()).toEqual(['event.scan', 'Disabled by the service: the receiver answered 410 Gone', '']);
      await expectAccessible(page);
      await saveScreenshots(page, 'admin-webhooks-disabled');
      await page.getByRole('link', { name: gone.url }).click();
      await expect.poll(() => deliveries(page).then((rows) => rows.map((r) => r.slice(0, 5)))).toEqual([['webhook.test', 'Failed', '410', expect.stringMatching(/^\d+ ms$/), '1']]);
      await page.getByRole('button', { name: 'Enable' }).click();
      await page.getByRole('button', { name: 'Disable' }).waitFor();
      expect(await t.admin.get<{ enabled: boolean; disabled_reason: null }>(`/${CUSTOMER}/webhooks/${created.webhook_id}`)).toMatchObject({ enabled: true, disabled_reason: null });
      expect(admin.problems).toEqual([]);
    } finally {
      await gone.stop();
    }
  });

  it('Delete while the deliveries are followed: no read asks for the deleted webhook', async () => {
    const { page } = admin;
    const slow = await new WebhookReceiver().start();
    let release = () => {};
    // The test message is held at the receiver: its delivery stays pending, so the page goes on reading the deliveries.
    slow.answer = () => new Promise<number>((resolve) => (release = () => resolve(200)));
    const created = await t.admin.post<{ webhook_id: string; secret: string }>(`/${CUSTOMER}/webhooks`, { url: slow.url, event_types: ['event.scan'] });
    slow.secrets = [created.secret];
    const reads: string[] = [];
    let deleting = false;
    const onRequest = (request: { url(): string; method(): string }) => {
      if (request.url().endsWith(`/webhooks/${created.webhook_id}`) && request.method() === 'DELETE') deleting = true;
      else if (request.url().includes(`/webhooks/${created.webhook_id}/deliveries`)) reads.push(deleting ? 'after the DELETE' : 'before');
    };
    page.on('request', onRequest);
    // The DELETE's answer is held 1.5 s in the browser, the webhook gone on the server meanwhile:
    // three reads of a page still following its deliveries (every half second) would fall in it.
    const deletion = `**/webhooks/${created.webhook_id}`;
    await page.route(deletion, async (route) => {
      if (route.request().method() !== 'DELETE') return route.continue();
      const response = await route.fetch();
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await route.fulfill({ response });
    });
    try {
      // Another section first: the Webhooks section then reads the list afresh, with the webhook made through the API.
      await openAdminSection(page, 'Users');
      await openAdminSection(page, 'Webhooks');
      await page.getByRole('link', { name: slow.url }).click();
      await page.getByRole('button', { name: 'Send test' }).click();
      await expect.poll(() => reads.length).toBeGreaterThanOrEqual(3);
      await page.getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('dialog', { name: 'Delete the webhook?' }).getByRole('button', { name: 'Delete' }).click();
      await expect.poll(() => page.getByRole('status').filter({ hasText: 'Deleted' }).textContent()).toBe(`Deleted the webhook to ${slow.url}.`);
      expect(reads.filter((read) => read === 'after the DELETE')).toEqual([]);
      expect(admin.problems).toEqual([]);
    } finally {
      page.off('request', onRequest);
      await page.unroute(deletion);
      release();
      await slow.stop();
    }
  });
});
