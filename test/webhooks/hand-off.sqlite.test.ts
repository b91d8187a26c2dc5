// The events a commit of MQTT ingest stored reach the webhooks in memory (docs/webhooks.md
// "Delivery"; SQLite: the writer thread hands them over): a caught-up webhook reads none of them
// back from the store, and one that fell behind its window reads them from the store, every
// event in order.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventLogRead, EventLogRepository } from '../../src/store/ports/index.js';
import { connectGateway, provisionGateway } from '../helpers/mqtt.js';
import { CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

let t: TestServer;
let receiver: WebhookReceiver;
/** Events the server's event log handed out (reads back from the store), counted while `counting`. */
let readBack = 0;

beforeAll(async () => {
  t = await startTestServer({ webhookAllowLoopback: true, webhooks: { retryBaseMs: 20, retryMaxMs: 40 }, webhookWindowEvents: 20 });
  receiver = await new WebhookReceiver().start();
  const log: EventLogRepository = t.server.ctx.store.eventLog;
  const after = log.after.bind(log);
  log.after = async (...args): Promise<EventLogRead> => {
    const read = await after(...args);
    readBack += read.events.length;
    return read;
  };
});
afterAll(async () => {
  await receiver.stop();
  await t.close();
});

/** Publishes `count` scans of the gateway at QoS 1, one after the other (each acknowledged after its commit); their ids. */
async function publishScans(client: Awaited<ReturnType<typeof connectGateway>>, topic: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  for (const id of ids) await client.publishAsync(topic, JSON.stringify({ id, type: 'scan', scan_code: 'H', device_id: 'ring-1' }), { qos: 1 });
  return ids;
}

it('sends a caught-up webhook the events of each commit without reading them back, and one behind its window every event in order from the store', async () => {
  const { secret } = await t.admin.post<{ secret: string }>(`/${CUSTOMER}/webhooks`, { url: receiver.url, event_types: ['event.scan'] });
  receiver.secrets = [secret];
  const gateway = await provisionGateway(t);
  const client = await connectGateway(gateway);
  try {
    // The first scan starts the webhook's window (read from the store once).
    const first = await publishScans(client, gateway.topic, 1);
    await receiver.waitFor((r) => r.events().length >= 1, 20_000, 'the first scan');
    readBack = 0;
    const caughtUp = await publishScans(client, gateway.topic, 15);
    await receiver.waitFor((r) => r.events().length >= 16, 20_000, '16 scans');
    expect(readBack).toBe(0);

    // The receiver fails while 60 scans are stored: the window keeps the last 20 of them.
    receiver.answer = () => 503;
    const behind = await publishScans(client, gateway.topic, 60);
    receiver.answer = () => 200;
    await receiver.waitFor((r) => r.events().length >= 76, 20_000, '76 scans');
    expect(receiver.events().map((e) => e.id)).toEqual([...first, ...caughtUp, ...behind]);
    expect(readBack).toBeGreaterThan(0);
  } finally {
    await client.endAsync();
  }
}, 60_000);
