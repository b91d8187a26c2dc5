// Webhook delivery (docs/webhooks.md "Delivery"): signed batches that the Standard Webhooks
// reference library verifies, in commit order with nothing missing across a receiver outage,
// retries, 410, test messages, replay, and the two signatures of a rotation.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';
import { eventRow } from '../helpers/events.js';
import { insertEvents } from '../helpers/store-rows.js';
import { until } from '../helpers/until.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

interface CreatedWebhook {
  webhook_id: string;
  secret: string;
}

let t: TestServer;
let receiver: WebhookReceiver;
let base = Date.now() - 3_600_000;

/** Stores `count` scans (or events of `type`) of the customer in one commit; their ids in commit order. */
async function storeScans(count: number, type = 'scan'): Promise<string[]> {
  const rows = Array.from({ length: count }, () => eventRow({ created: ++base, type, scan_code: 'code' }));
  await insertEvents(t, CUSTOMER, rows);
  return rows.map((row) => row.id);
}

async function createWebhook(event_types: string[] = ['event.scan'], url = receiver.url): Promise<CreatedWebhook> {
  const created = await t.admin.post<CreatedWebhook>(`/${CUSTOMER}/webhooks`, { url, event_types });
  receiver.secrets = [created.secret];
  return created;
}

beforeAll(async () => {
  t = await startTestServer({ webhookAllowLoopback: true, webhooks: { retryBaseMs: 20, retryMaxMs: 100 } });
});
afterAll(async () => {
  await t.close();
});

describe('a receiver failing for longer than the give-up time', () => {
  it('disables the webhook with the reason and an audit entry', async () => {
    const failing = await new WebhookReceiver().start();
    const short = await startTestServer({ webhookAllowLoopback: true, webhooks: { retryBaseMs: 10, retryMaxMs: 20, giveUpMs: 300 } });
    try {
      failing.answer = () => 500;
      const created = await short.admin.post<CreatedWebhook>(`/${CUSTOMER}/webhooks`, { url: failing.url, event_types: ['event.scan'] });
      failing.secrets = [created.secret];
      await insertEvents(short, CUSTOMER, [eventRow({ created: Date.now() - 1000 })]);
      const disabled = await until(() => short.admin.get<{ enabled: boolean; disabled_reason: string }>(`/${CUSTOMER}/webhooks/${created.webhook_id}`), (w) => !w.enabled);
      expect(disabled.disabled_reason).toMatch(/^no delivery succeeded since \S+ \(last: answered 500\)$/);
      const [delivery] = (await short.admin.get<{ items: { status: string; attempts: number; response_status: number }[] }>(`/${CUSTOMER}/webhooks/${created.webhook_id}/deliveries`)).items;
      expect(delivery).toMatchObject({ status: 'FAILED', response_status: 500 });
      expect(delivery!.attempts).toBeGreaterThan(2);
      const audit = await short.admin.get<{ items: { action: string; actor: object }[] }>(`/${CUSTOMER}/audit-log?action=webhook.disabled`);
      expect(audit.items.map((e) => [e.action, e.actor])).toEqual([['webhook.disabled', { type: 'operator', id: 'webhook-deliverer' }]]);
    } finally {
      await short.close();
      await failing.stop();
    }
  });
});

describe('webhook delivery', () => {
  let webhook: CreatedWebhook;

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
  });
  afterEach(async () => {
    if (webhook) await t.admin.delete(`/${CUSTOMER}/webhooks/${webhook.webhook_id}`);
    receiver.messages.length = 0;
    receiver.answer = () => 200;
  });
  afterAll(async () => {
    await receiver.stop();
  });

  it('sends the scans committed after its creation in signed batches of at most 500, in commit order, verified by standardwebhooks', async () => {
    await storeScans(3); // before the webhook: not sent
    webhook = await createWebhook();
    const ids = [...(await storeScans(700)), ...(await storeScans(5, 'telemetry')), ...(await storeScans(300))];
    const scans = ids.filter((_, i) => i < 700 || i >= 705);
    await receiver.waitFor((r) => r.events().length >= scans.length, 20_000, '1,000 scans');
    expect(receiver.events().map((e) => e.id)).toEqual(scans);
    expect(new Set(receiver.events().map((e) => e.type))).toEqual(new Set(['scan']));
    expect(receiver.unverified).toEqual([]);
    for (const message of receiver.messages) {
      expect(message.body.type).toBe('event.batch');
      expect((message.body.data as unknown[]).length).toBeLessThanOrEqual(500);
      expect(message.headers['content-type']).toBe('application/json');
    }
  });

  it('mixes the types it takes in one batch, in commit order', async () => {
    webhook = await createWebhook(['event.scan', 'event.telemetry']);
    const ids = [...(await storeScans(3)), ...(await storeScans(2, 'telemetry')), ...(await storeScans(3))];
    await receiver.waitFor((r) => r.events().length >= ids.length);
    expect(receiver.events().map((e) => [e.id, e.type])).toEqual(ids.map((id, i) => [id, i >= 3 && i < 5 ? 'telemetry' : 'scan']));
  });

  it('keeps everything through an outage and sends it after, in order, nothing missing (by event id)', async () => {
    webhook = await createWebhook();
    let down = true;
    receiver.answer = () => (down ? 503 : 200);
    const ids = [...(await storeScans(50)), ...(await storeScans(50))];
    const deliveries = () => t.admin.get<{ items: { status: string; attempts: number; response_status?: number }[] }>(`/${CUSTOMER}/webhooks/${webhook.webhook_id}/deliveries`);
    const failing = await until(deliveries, (list) => (list.items[0]?.attempts ?? 0) >= 3, { what: 'three failed attempts' });
    expect(failing.items[0]).toMatchObject({ status: 'PENDING', response_status: 503 });
    ids.push(...(await storeScans(600)));
    down = false;
    await receiver.waitFor((r) => r.events().length >= ids.length, 20_000, 'the scans after the outage');
    expect(receiver.events().map((e) => e.id)).toEqual(ids);
    // Each recorded after its answer: all SUCCEEDED once the last one is.
    await until(deliveries, (list) => list.items.every((d) => d.status === 'SUCCEEDED'), { what: 'every delivery SUCCEEDED' });
  });

  it('disables the webhook at a 410, with the reason and an audit entry', async () => {
    webhook = await createWebhook();
    receiver.answer = () => 410;
    await storeScans(1);
    const disabled = await until(() => t.admin.get<{ enabled: boolean; disabled_reason: string | null }>(`/${CUSTOMER}/webhooks/${webhook.webhook_id}`), (w) => !w.enabled);
    expect(disabled).toMatchObject({ enabled: false, disabled_reason: 'the receiver answered 410 Gone' });
    const audit = await t.admin.get<{ items: { action: string; target: object; details: object }[] }>(`/${CUSTOMER}/audit-log?action=webhook.disabled`);
    expect(audit.items[0]).toMatchObject({ action: 'webhook.disabled', target: { type: 'webhook', id: webhook.webhook_id }, details: { reason: 'the receiver answered 410 Gone' } });
    // Enabled again, it resumes from its cursor: the event is sent.
    receiver.answer = () => 200;
    await t.admin.patch(`/${CUSTOMER}/webhooks/${webhook.webhook_id}`, { enabled: true });
    await receiver.waitFor((r) => r.events().length === 1, 20_000, 'the event after enabling');
  });

  it('sends webhook.test, and a replay sends the events again from a time', async () => {
    webhook = await createWebhook();
    const since = base + 1;
    const ids = await storeScans(10);
    await receiver.waitFor((r) => r.events().length === 10);
    const test = await t.admin.post<{ delivery_id: string; type: string; status: string }>(`/${CUSTOMER}/webhooks/${webhook.webhook_id}/test`);
    expect(test).toMatchObject({ type: 'webhook.test', status: 'PENDING' });
    await receiver.waitFor((r) => r.messages.some((m) => m.id === test.delivery_id));
    expect(receiver.messages.find((m) => m.id === test.delivery_id)!.body).toMatchObject({ type: 'webhook.test', data: { webhook_id: webhook.webhook_id } });
    receiver.messages.length = 0;
    expect(await t.admin.post(`/${CUSTOMER}/webhooks/${webhook.webhook_id}/replay`, { since: since + 5 })).toEqual({ webhook_id: webhook.webhook_id, since: since + 5 });
    await receiver.waitFor((r) => r.events().length === 5);
    expect(receiver.events().map((e) => e.id)).toEqual(ids.slice(5));
  });

  it('signs with both the new and the previous secret after a rotation', async () => {
    webhook = await createWebhook();
    const rotated = await t.admin.post<CreatedWebhook>(`/${CUSTOMER}/webhooks/${webhook.webhook_id}/rotate-secret`);
    expect(rotated.secret).not.toBe(webhook.secret);
    receiver.secrets = [webhook.secret, rotated.secret];
    await storeScans(1);
    await receiver.waitFor((r) => r.events().length === 1);
    expect(receiver.messages[0]!.verifiedBy).toEqual([0, 1]);
    expect(String(receiver.messages[0]!.headers['webhook-signature']).split(' ')).toHaveLength(2);
  });

  it('signs with both secrets a message whose reading began before the rotation', async () => {
    // The worker's first read of its queue is held: it has read the webhook, not yet the events.
    const webhooks = t.server.ctx.store.webhooks;
    const head = webhooks.head;
    let release = () => undefined as void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered = () => undefined as void;
    const inHead = new Promise<void>((resolve) => (entered = resolve));
    let holding = true;
    webhooks.head = async (id: string) => {
      if (holding) {
        holding = false;
        entered();
        await held;
      }
      return head.call(webhooks, id);
    };
    try {
      webhook = await createWebhook();
      await inHead;
      const heard = new Promise<void>((resolve) => {
        const stop = t.server.ctx.store.signals.subscribe((signal) => {
          if (signal.kind !== 'webhook-changed' || signal.webhook_id !== webhook.webhook_id) return;
          stop();
          resolve();
        });
      });
      const rotated = await t.admin.post<CreatedWebhook>(`/${CUSTOMER}/webhooks/${webhook.webhook_id}/rotate-secret`);
      receiver.secrets = [webhook.secret, rotated.secret];
      // The deliverer heard of the change (it subscribed before this test), and the scan is there for the read held.
      await heard;
      await storeScans(1);
      release();
      await receiver.waitFor((r) => r.events().length === 1);
      expect(receiver.messages[0]!.verifiedBy).toEqual([0, 1]);
    } finally {
      release();
      webhooks.head = head;
    }
  });
});
