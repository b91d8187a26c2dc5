// A restart of serve (docs/alerts.md "Jobs"): the job tracker's cursor and open jobs are in the
// database, so a job started before the restart completes after it, and nothing completed before
// is sent again.
import { randomUUID } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { startServer } from '../../src/serve/start.js';
import { scanRow } from '../helpers/events.js';
import { CUSTOMER, startTestServer, testServeOptions, type TestServer } from '../helpers/server.js';
import { insertEvents, insertGateway, selectRows } from '../helpers/store-rows.js';
import { until } from '../helpers/until.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const OPTIONS = { webhookAllowLoopback: true, alertIntervalMs: 50, webhooks: { retryBaseMs: 20, retryMaxMs: 100 } };
const receiver = new WebhookReceiver();
let first: TestServer | undefined;
let second: Awaited<ReturnType<typeof startServer>> | undefined;

afterAll(async () => {
  await second?.close();
  await first?.close();
  await receiver.stop();
});

it('a job open across a restart completes once after it; the one completed before is not sent again', async () => {
  await receiver.start();
  first = await startTestServer(OPTIONS);
  const dock = await insertGateway(first, CUSTOMER, 'dock-1');
  await first.admin.post(`/${CUSTOMER}/job-configs`, { job_name: 'picking', start_barcode: 'S', end_barcode: 'E', gateway_ids: [dock] });
  const { secret, webhook_id } = await first.admin.post<{ secret: string; webhook_id: string }>(`/${CUSTOMER}/webhooks`, { url: receiver.url, event_types: ['job.completed'] });
  receiver.secrets = [secret];
  await until(() => selectRows(first!, 'SELECT customer_id FROM alert_trackers'), (rows) => rows.length === 1);

  const [done, doneEnd, open] = [randomUUID(), randomUUID(), randomUUID()];
  await insertEvents(first, CUSTOMER, [scanRow(done, dock, Date.now(), 'S-1'), scanRow(doneEnd, dock, Date.now() + 1, 'E-1'), scanRow(open, dock, Date.now() + 2, 'S-2')]);
  await receiver.waitFor(() => receiver.messages.length === 1);
  await until(
    () => first!.admin.get<{ items: { status: string }[] }>(`/${CUSTOMER}/webhooks/${webhook_id}/deliveries`),
    (list) => list.items.length === 1 && list.items[0]!.status === 'SUCCEEDED',
  );
  await first.server.close();

  second = await startServer(testServeOptions(first.dataDir, first.server.ctx.store.locator, { ...OPTIONS, publicUrl: first.server.publicUrl.url }));
  const end = randomUUID();
  await insertEvents({ server: second } as TestServer, CUSTOMER, [scanRow(end, dock, Date.now() + 3, 'E-2')]);
  await receiver.waitFor(() => receiver.messages.length === 2);
  expect(receiver.messages.map((m) => [(m.body.data as { start_event_id: string }).start_event_id, (m.body.data as { end_event_id: string }).end_event_id])).toEqual([
    [done, doneEnd],
    [open, end],
  ]);
});
