// On SQLite the deliverer's frequent writes (a batch queued, the successes) run in the ingest
// writer thread on its connection (docs/webhooks.md "Delivery"): a commit of any other connection
// would empty the writer's page cache. Without the route they run on the store's own connection.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookWrite } from '../../src/store/ports/index.js';
import { eventRow } from '../helpers/events.js';
import { CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';
import { dbOf, openTempStore } from '../helpers/sqlite.js';
import { insertEvents } from '../helpers/store-rows.js';
import { until } from '../helpers/until.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { webhookOfNewCustomer } from '../helpers/webhook-rows.js';

describe('serve', () => {
  let t: TestServer;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    t = await startTestServer({ webhookAllowLoopback: true });
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await receiver.stop();
    await t.close();
  });

  it('queues and records the batches of a webhook without a write on the server thread connection', async () => {
    const created = await t.admin.post<{ webhook_id: string; secret: string }>(`/${CUSTOMER}/webhooks`, { url: receiver.url, event_types: ['event.scan'] });
    receiver.secrets = [created.secret];
    let base = Date.now() - 60_000;
    const rows = Array.from({ length: 1_200 }, () => eventRow({ created: ++base, type: 'scan', scan_code: 'R' }));
    await insertEvents(t, CUSTOMER, rows);
    // Rows changed by the server thread's connection since it opened: the events above were the last.
    const changes = () => dbOf(t.server).prepare('SELECT total_changes()').pluck().get() as number;
    const before = changes();
    await receiver.waitFor((r) => r.events().length === rows.length, 20_000, 'the 1,200 scans');
    const deliveries = await until(
      () => t.admin.get<{ items: { status: string }[] }>(`/${CUSTOMER}/webhooks/${created.webhook_id}/deliveries`),
      (list) => list.items.length === 3 && list.items.every((d) => d.status === 'SUCCEEDED'),
      { what: 'three deliveries SUCCEEDED' },
    );
    expect(deliveries.items.length).toBe(3);
    expect(receiver.events().map((e) => e.id)).toEqual(rows.map((row) => row.id));
    expect(changes()).toBe(before);
  });
});

describe('SqliteWebhooks.routeWrites', () => {
  const stores: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
  });

  /** A webhook of a new customer in a temporary store, and a batch delivery of it. */
  async function setUp() {
    const temp = openTempStore();
    stores.push(temp);
    const { store } = temp;
    const { customerId, webhookId, batch } = await webhookOfNewCustomer(store);
    return { store, customerId, webhookId, batch };
  }

  it('sends the writes of one turn to the route together, in order; without a route they are written as before', async () => {
    const { store, customerId, webhookId, batch } = await setUp();
    const routed: WebhookWrite[][] = [];
    // The route runs them on the same store here: what matters is that they go through it.
    store.webhooks.routeWrites!(async (writes) => {
      routed.push(writes);
      return store.webhooks.runWrites!(writes);
    });
    const first = batch(0, 10);
    const second = batch(10, 20);
    await store.webhooks.enqueue(first);
    const head = (await store.webhooks.head(webhookId))!;
    await Promise.all([store.webhooks.succeededRun([{ delivery: head, now: 5, response_status: 200, latency_ms: 3 }], second), store.webhooks.enqueue(batch(20, 30))]);
    expect(routed.map((writes) => writes.map((write) => write.kind))).toEqual([['enqueue'], ['succeeded', 'enqueue']]);
    expect((await store.webhooks.get(customerId, webhookId))!.cursor).toEqual([10]);
    expect((await store.webhooks.head(webhookId))!.id).toBe(second.id);
    store.webhooks.routeWrites!(undefined);
    await store.webhooks.enqueue(batch(30, 40));
    expect(routed.length).toBe(2);
    expect((await store.webhooks.deliveries(customerId, webhookId, 10)).map((d) => d.status)).toEqual(['PENDING', 'PENDING', 'PENDING', 'SUCCEEDED']);
  });

  it('rolls a write that fails back alone: the others of its group are written', async () => {
    const { store, customerId, webhookId, batch } = await setUp();
    const first = batch(0, 10);
    const done = store.webhooks.runWrites!([
      { kind: 'enqueue', delivery: first },
      { kind: 'enqueue', delivery: first },
      { kind: 'enqueue', delivery: batch(10, 20) },
    ]);
    expect(done[0]).toBeNull();
    // With the driver's code, by which the store's wrapper tells a full disk (SQLITE_FULL) from the rest.
    expect(done[1]).toEqual({ message: 'UNIQUE constraint failed: webhook_deliveries.id', code: 'SQLITE_CONSTRAINT_UNIQUE' });
    expect(done[2]).toBeNull();
    expect((await store.webhooks.deliveries(customerId, webhookId, 10)).map((d) => d.id)).toHaveLength(2);
  });
});
