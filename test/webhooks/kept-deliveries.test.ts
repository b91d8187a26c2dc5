// A webhook's finished deliveries are trimmed to the newest DELIVERIES_KEPT once every TRIM_EVERY
// of them, not at each success (the trim reads the newest 500, more than a success writes): the
// deliveries list still shows the newest, and the store holds a bounded number more.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DELIVERIES_KEPT } from '../../src/domain/webhooks.js';
import type { WebhookDelivery } from '../../src/store/ports/index.js';
import { TRIM_EVERY } from '../../src/store/shared/webhook-rows.js';
import { CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ webhookAllowLoopback: true });
});
afterAll(async () => {
  await t.close();
});

it('trims the finished deliveries once every TRIM_EVERY successes, keeping the newest DELIVERIES_KEPT in the list', async () => {
  const created = await t.admin.post<{ webhook_id: string }>(`/${CUSTOMER}/webhooks`, { url: 'http://127.0.0.1:9/hook', event_types: ['event.scan'], enabled: false });
  const webhooks = t.server.ctx.store.webhooks;
  const count = DELIVERIES_KEPT + TRIM_EVERY + 10;
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const delivery: WebhookDelivery = {
      id: `d-${String(i).padStart(4, '0')}`, webhook_id: created.webhook_id, customer_id: CUSTOMER, type: 'webhook.test', created: 1_000 + i,
      from: null, upto: null, payload: '{}', attempts: 0, status: 'PENDING', response_status: null, latency_ms: null, next_attempt: null,
    };
    await webhooks.enqueue(delivery);
    await webhooks.succeededRun([{ delivery, now: 2_000 + i, response_status: 200, latency_ms: 1 }]);
    ids.push(delivery.id);
  }
  // Trimmed at each TRIM_EVERY-th success: the last trim left DELIVERIES_KEPT, the successes since are all there.
  const stored = await webhooks.deliveries(CUSTOMER, created.webhook_id, 10_000);
  const sinceTrim = count % TRIM_EVERY;
  expect(stored.map((d) => d.id)).toEqual(ids.slice(-(DELIVERIES_KEPT + sinceTrim)).reverse());
  const listed = await t.admin.get<{ items: { delivery_id: string; status: string }[] }>(`/${CUSTOMER}/webhooks/${created.webhook_id}/deliveries?limit=${DELIVERIES_KEPT}`);
  expect(listed.items.map((d) => d.delivery_id)).toEqual(ids.slice(-DELIVERIES_KEPT).reverse());
  expect(new Set(listed.items.map((d) => d.status))).toEqual(new Set(['SUCCEEDED']));
});
