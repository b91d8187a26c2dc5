import { afterAll, expect, it } from 'vitest';
import { eventRow } from '../helpers/events.js';
import { CUSTOMER, secondInstance, startTestServer, type TestServer } from '../helpers/server.js';
import { insertEvents, selectRows } from '../helpers/store-rows.js';
import { requirePostgresProject } from '../helpers/test-store.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

// Two instances of the service on one PostgreSQL database (docs/webhooks.md "Several instances"):
// the lease of a webhook lets one instance deliver it at a time, so each event reaches the
// receiver once; when the holder stops, the other takes the lease over and goes on from the cursor.
// (PostgreSQL only: a .postgres.test.ts file, test/README.md.)

requirePostgresProject(import.meta.url);

const TIMINGS = { leaseRenewMs: 100, leaseMs: 1_000, retryBaseMs: 20, retryMaxMs: 100 };
let a: TestServer | undefined;
let b: TestServer | undefined;
const receiver = new WebhookReceiver();

afterAll(async () => {
  await b?.close();
  await a?.server.close();
  await receiver.stop();
});

const rows = (count: number) => Array.from({ length: count }, (_, i) => eventRow({ created: Date.now() - 60_000 + i }));

it('one instance delivers a webhook at a time; the other takes over when it stops, nothing missing or repeated', async () => {
  await receiver.start();
  a = await startTestServer({ webhookAllowLoopback: true, webhooks: TIMINGS });
  const { secret, webhook_id } = await a.admin.post<{ secret: string; webhook_id: string }>(`/${CUSTOMER}/webhooks`, { url: receiver.url, event_types: ['event.scan'] });
  receiver.secrets = [secret];
  const first = rows(1);
  await insertEvents(a, CUSTOMER, first);
  await receiver.waitFor((r) => r.events().length === 1);
  const [lease] = await selectRows(a, 'SELECT holder FROM leases WHERE name = ?', `webhook:${webhook_id}`);
  b = await secondInstance(a, { webhookAllowLoopback: true, webhooks: TIMINGS });

  // Both running, each told of every commit: still each event once, and a's lease stays a's.
  const during = [...rows(200)];
  for (let i = 0; i < during.length; i += 20) await insertEvents(i % 40 === 0 ? a : b, CUSTOMER, during.slice(i, i + 20));
  await receiver.waitFor((r) => r.events().length === 201);
  expect(await selectRows(a, 'SELECT holder FROM leases WHERE name = ?', `webhook:${webhook_id}`)).toEqual([lease]);

  // a stops: b takes the lease and sends what follows.
  await a.server.close();
  const after = rows(50);
  await insertEvents(b, CUSTOMER, after);
  await receiver.waitFor((r) => r.events().length === 251, 10_000, 'the events after a stopped');
  expect(receiver.events().map((e) => e.id)).toEqual([...first, ...during, ...after].map((row) => row.id));
  expect(await selectRows(b, 'SELECT holder FROM leases WHERE name = ?', `webhook:${webhook_id}`)).not.toEqual([lease]);
});
