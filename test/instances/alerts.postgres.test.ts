import { randomUUID } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { scanRow } from '../helpers/events.js';
import { CUSTOMER, secondInstance, startTestServer, type TestServer } from '../helpers/server.js';
import { insertEvents, insertGateway, selectRows } from '../helpers/store-rows.js';
import { requirePostgresProject } from '../helpers/test-store.js';
import { until } from '../helpers/until.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

// Two instances of the service on one PostgreSQL database (docs/alerts.md "Jobs"): the job tracker
// runs under the `alerts` lease with its cursor in the database, so each completed job reaches the
// receiver once while both run, and the other instance goes on from the cursor when the holder
// stops. (PostgreSQL only: a .postgres.test.ts file, test/README.md.)

requirePostgresProject(import.meta.url);

const OPTIONS = { webhookAllowLoopback: true, alertIntervalMs: 50, webhooks: { leaseRenewMs: 100, leaseMs: 1_000, retryBaseMs: 20, retryMaxMs: 100 } };
let a: TestServer | undefined;
let b: TestServer | undefined;
const receiver = new WebhookReceiver();

afterAll(async () => {
  await b?.close();
  await a?.server.close();
  await receiver.stop();
});

it('one instance tracks jobs at a time; the other goes on from the cursor when it stops, no job.completed missing or repeated', async () => {
  await receiver.start();
  a = await startTestServer(OPTIONS);
  const dock = await insertGateway(a, CUSTOMER, 'dock-1');
  await a.admin.post(`/${CUSTOMER}/job-configs`, { job_name: 'picking', start_barcode: 'S', end_barcode: 'E', gateway_ids: [dock] });
  const { secret, webhook_id } = await a.admin.post<{ secret: string; webhook_id: string }>(`/${CUSTOMER}/webhooks`, { url: receiver.url, event_types: ['job.completed'] });
  receiver.secrets = [secret];
  await until(() => selectRows(a!, 'SELECT customer_id FROM alert_trackers'), (rows) => rows.length === 1);
  const ends: string[] = [];
  const job = async (via: TestServer) => {
    const [start, end] = [randomUUID(), randomUUID()];
    ends.push(end);
    await insertEvents(via, CUSTOMER, [scanRow(start, dock, Date.now(), 'S-1'), scanRow(end, dock, Date.now() + 1, 'E-1')]);
  };
  const completed = () => receiver.messages.map((m) => (m.body.data as { end_event_id: string }).end_event_id);

  await job(a);
  await receiver.waitFor(() => completed().length === 1);
  b = await secondInstance(a, OPTIONS);
  for (let i = 0; i < 10; i++) await job(i % 2 === 0 ? a : b);
  await receiver.waitFor(() => completed().length === 11);

  // a stops (giving its leases up) once its last delivery is recorded (a delivery whose answer a
  // did not record yet is sent again, under the same webhook-id: docs/webhooks.md "Delivery"): b
  // tracks and delivers what follows.
  await until(
    () => a!.admin.get<{ items: { status: string }[] }>(`/${CUSTOMER}/webhooks/${webhook_id}/deliveries`),
    (list) => list.items.length === 11 && list.items.every((d) => d.status === 'SUCCEEDED'),
  );
  await a.server.close();
  for (let i = 0; i < 5; i++) await job(b);
  await receiver.waitFor(() => completed().length === 16, 10_000, 'the jobs after a stopped');
  expect(completed()).toEqual(ends);
  expect(new Set(receiver.messages.map((m) => m.id)).size).toBe(16);
});
