// gateway.connectivity (docs/alerts.md "Connectivity"): each change of a gateway's
// connectivity_status, as GET /gateways shows it, reaches the webhooks that take it once; the
// first look at a gateway only records it. A real gateway connects over MQTT and sends.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectGateway, provisionGateway } from '../helpers/mqtt.js';
import { CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';
import { selectRows } from '../helpers/store-rows.js';
import { until } from '../helpers/until.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

let t: TestServer;
const receiver = new WebhookReceiver();

beforeAll(async () => {
  await receiver.start();
  t = await startTestServer({ webhookAllowLoopback: true, alertIntervalMs: 50, webhooks: { retryBaseMs: 20, retryMaxMs: 100 } });
});
afterAll(async () => {
  await t?.close();
  await receiver.stop();
});

it('sends REGISTERING -> ACTIVE at a gateway first message, and ACTIVE -> INACTIVE two hours after its last', async () => {
  const gateway = await provisionGateway(t, { name: 'dock-7' });
  const { secret } = await t.admin.post<{ secret: string }>(`/${CUSTOMER}/webhooks`, { url: receiver.url, event_types: ['gateway.connectivity'] });
  receiver.secrets = [secret];
  // Recorded as it is (REGISTERING: prepared, nothing sent yet), without a message.
  await until(() => selectRows(t, 'SELECT connectivity FROM gateway_connectivity WHERE gateway_id = ?', gateway.id), (rows) => rows.length === 1);
  expect(await t.admin.get<{ connectivity_status: string }>(`/${CUSTOMER}/gateways/${gateway.id}`)).toMatchObject({ connectivity_status: 'REGISTERING' });

  const client = await connectGateway(gateway);
  await client.publishAsync(gateway.topic, JSON.stringify({ type: 'telemetry', device_battery: 80 }), { qos: 1 });
  await receiver.waitFor(() => receiver.messages.length === 1);
  const sent = Date.now();
  await client.endAsync();
  expect(receiver.messages[0]!.body).toEqual({
    type: 'gateway.connectivity',
    timestamp: expect.any(String),
    data: { gateway_id: gateway.id, name: 'dock-7', connectivity: 'ACTIVE', changed_at: expect.any(Number) },
  });

  // Two hours of silence, as the stored last message says.
  await selectRows(t, 'UPDATE gateways SET last_message = ? WHERE id = ?', sent - 2 * 3_600_000 - 1_000, gateway.id);
  await receiver.waitFor(() => receiver.messages.length === 2);
  expect(receiver.messages.map((m) => (m.body.data as { connectivity: string }).connectivity)).toEqual(['ACTIVE', 'INACTIVE']);
  expect(await t.admin.get<{ connectivity_status: string }>(`/${CUSTOMER}/gateways/${gateway.id}`)).toMatchObject({ connectivity_status: 'INACTIVE' });
});
