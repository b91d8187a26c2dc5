import { randomUUID } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { scanRow } from '../helpers/events.js';
import { atInstance, connectGateway, provisionGateway } from '../helpers/mqtt.js';
import { CUSTOMER, secondInstance, startTestServer, type TestServer } from '../helpers/server.js';
import { insertEvents, insertGateway, selectRows } from '../helpers/store-rows.js';
import { requirePostgresProject } from '../helpers/test-store.js';
import { until } from '../helpers/until.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

// Two instances of the service on one PostgreSQL database (docs/alerts.md "Jobs"): the job tracker
// runs under the `alerts` lease with its cursor in the database, so each completed job reaches the
// receiver once while both run, and the other instance goes on from the cursor when the holder
// stops. station_silent reads the gateways connected to every instance (docs/alerts.md).
// (PostgreSQL only: a .postgres.test.ts file, test/README.md.)

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

it('station_silent sees a gateway connected to the other instance: the evaluating instance opens its alert, and resolves it when that instance stops', async () => {
  let skew = 0;
  const clock = () => Date.now() + skew;
  const silentOptions = { ...OPTIONS, clock };
  const c = await startTestServer(silentOptions);
  let d: TestServer | undefined;
  const silentReceiver = new WebhookReceiver();
  try {
    await silentReceiver.start();
    const { secret } = await c.admin.post<{ secret: string }>(`/${CUSTOMER}/webhooks`, { url: silentReceiver.url, event_types: ['alert.opened', 'alert.resolved'] });
    silentReceiver.secrets = [secret];
    const press = await provisionGateway(c, { name: 'press-9' });
    await c.admin.post(`/${CUSTOMER}/alert-rules`, { kind: 'station_silent', gateway_ids: [press.id], after_seconds: 30 });
    await until(() => selectRows(c, 'SELECT customer_id FROM alert_trackers'), (rows) => rows.length === 1);
    // c evaluates (it holds the `alerts` lease, taken first); the gateway connects to d.
    d = await secondInstance(c, silentOptions);
    const device = await connectGateway(atInstance(d, press));
    await until(() => c.server.ctx.store.presence.connected(), (map) => map.has(press.id));
    skew += 31_000;
    await silentReceiver.waitFor(() => silentReceiver.messages.length === 1);
    expect(silentReceiver.messages[0]!.body).toMatchObject({ type: 'alert.opened', data: { kind: 'station_silent', subject: { type: 'gateway', id: press.id }, details: { gateway_name: 'press-9' } } });
    // d stops: its connections are withdrawn, the gateway is no longer connected anywhere.
    device.end(true);
    await d.close();
    d = undefined;
    await silentReceiver.waitFor(() => silentReceiver.messages.length === 2);
    expect(silentReceiver.messages.map((m) => m.body.type)).toEqual(['alert.opened', 'alert.resolved']);
  } finally {
    await d?.close();
    await c.close();
    await silentReceiver.stop();
  }
});
