// The successes of batches sent while the write before them is pending are written together, in
// one write (docs/webhooks.md "Delivery"): every message still recorded SUCCEEDED, in order.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AttemptOutcome, NewDelivery } from '../../src/store/ports/index.js';
import { UNWRITTEN } from '../../src/webhooks/webhook-worker.js';
import { eventRow } from '../helpers/events.js';
import { CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';
import { insertEvents } from '../helpers/store-rows.js';
import { until } from '../helpers/until.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

let t: TestServer;
let receiver: WebhookReceiver;
/** Resolves the first write, held until then. */
let release: () => void = () => undefined;
/** The number of successes in each write. */
const writes: number[] = [];

beforeAll(async () => {
  t = await startTestServer({ webhookAllowLoopback: true });
  receiver = await new WebhookReceiver().start();
  const webhooks = t.server.ctx.store.webhooks;
  const succeededRun = webhooks.succeededRun.bind(webhooks);
  const gate = new Promise<void>((resolve) => (release = resolve));
  webhooks.succeededRun = async (outcomes: readonly AttemptOutcome[], next?: NewDelivery) => {
    writes.push(outcomes.length);
    if (writes.length === 1) await gate;
    return succeededRun(outcomes, next);
  };
});
afterAll(async () => {
  release();
  await receiver.stop();
  await t.close();
});

it('writes the successes that waited for the same write as one, each message recorded', async () => {
  const created = await t.admin.post<{ webhook_id: string; secret: string }>(`/${CUSTOMER}/webhooks`, { url: receiver.url, event_types: ['event.scan'] });
  receiver.secrets = [created.secret];
  let base = Date.now() - 60_000;
  // One batch more than may go unwritten, of 500 events each.
  const batches = UNWRITTEN + 1;
  const rows = Array.from({ length: batches * 500 }, () => eventRow({ created: ++base, type: 'scan', scan_code: 'G' }));
  // Batches 2 to UNWRITTEN are answered while the first one's success is held: the read of the
  // last batch follows the 2xx of the one before, whose success is recorded before any timer.
  const log = t.server.ctx.store.eventLog;
  const after = log.after.bind(log);
  log.after = async (...args: Parameters<typeof log.after>) => {
    const read = await after(...args);
    if (read.events[0]?.json.includes(rows[UNWRITTEN * 500]!.id)) setTimeout(release, 0);
    return read;
  };
  await insertEvents(t, CUSTOMER, rows);
  await receiver.waitFor((r) => r.events().length >= rows.length, 20_000, 'every scan');
  expect(receiver.events().map((e) => e.id)).toEqual(rows.map((row) => row.id));
  expect(receiver.unverified).toEqual([]);
  const deliveries = () => t.admin.get<{ items: { delivery_id: string; status: string; attempts: number; response_status: number }[] }>(`/${CUSTOMER}/webhooks/${created.webhook_id}/deliveries`);
  const done = await until(deliveries, (list) => list.items.length === batches && list.items.every((d) => d.status === 'SUCCEEDED'), { what: 'every delivery SUCCEEDED' });
  expect(done.items.map((d) => [d.delivery_id, d.attempts, d.response_status])).toEqual(receiver.messages.map((m) => [m.id, 1, 200]).reverse());
  expect(writes).toEqual([1, UNWRITTEN - 1, 1]);
});
