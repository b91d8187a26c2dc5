// After a batch's 2xx the next batch is sent at once, while the success before it is still being
// written (docs/webhooks.md "Delivery"), and a failure of that next batch is retried under its
// webhook-id once that write is done: in order, nothing missing, each delivery recorded.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AttemptOutcome, NewDelivery } from '../../src/store/ports/index.js';
import { eventRow } from '../helpers/events.js';
import { CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';
import { insertEvents } from '../helpers/store-rows.js';
import { until } from '../helpers/until.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

let t: TestServer;
let receiver: WebhookReceiver;
/** Resolves the first success's write, held until then. */
let release: () => void = () => undefined;
let held = 0;

beforeAll(async () => {
  t = await startTestServer({ webhookAllowLoopback: true, webhooks: { retryBaseMs: 20, retryMaxMs: 40 } });
  receiver = await new WebhookReceiver().start();
  const webhooks = t.server.ctx.store.webhooks;
  const succeededRun = webhooks.succeededRun.bind(webhooks);
  const gate = new Promise<void>((resolve) => (release = resolve));
  webhooks.succeededRun = async (outcomes: readonly AttemptOutcome[], next?: NewDelivery) => {
    if (held++ === 0) await gate;
    return succeededRun(outcomes, next);
  };
});
afterAll(async () => {
  release();
  await receiver.stop();
  await t.close();
});

it('sends the next batch while the success before it is written, and retries a failure of it under the same webhook-id', async () => {
  const created = await t.admin.post<{ webhook_id: string; secret: string }>(`/${CUSTOMER}/webhooks`, { url: receiver.url, event_types: ['event.scan'] });
  receiver.secrets = [created.secret];
  let base = Date.now() - 60_000;
  const rows = Array.from({ length: 1_200 }, () => eventRow({ created: ++base, type: 'scan', scan_code: 'P' }));
  const attempts: string[] = [];
  receiver.answer = (message) => {
    attempts.push(message.id);
    // The third message fails once: recorded only after the writes before it.
    return attempts.length === 3 ? 503 : 200;
  };
  await insertEvents(t, CUSTOMER, rows);

  // The second batch reaches the receiver while the first one's success is not written.
  await receiver.waitFor((r) => r.messages.length >= 2, 20_000, 'the second batch');
  const deliveries = () => t.admin.get<{ items: { delivery_id: string; status: string; attempts: number }[] }>(`/${CUSTOMER}/webhooks/${created.webhook_id}/deliveries`);
  expect((await deliveries()).items.map((d) => d.status)).toEqual(['PENDING']);
  release();

  await receiver.waitFor((r) => r.events().length >= rows.length, 20_000, 'the 1,200 scans');
  expect(receiver.events().map((e) => e.id)).toEqual(rows.map((row) => row.id));
  expect(receiver.unverified).toEqual([]);
  // The failed third message came again under its webhook-id.
  expect(attempts.length).toBe(4);
  expect(attempts[3]).toBe(attempts[2]);
  const done = await until(deliveries, (list) => list.items.every((d) => d.status === 'SUCCEEDED'), { what: 'every delivery SUCCEEDED' });
  expect(done.items.map((d) => [d.delivery_id, d.attempts])).toEqual([
    [attempts[2], 2],
    [attempts[1], 1],
    [attempts[0], 1],
  ]);
});
