// kill -9 of `serve` in the middle of a delivery (docs/webhooks.md "Delivery"): after a restart the
// batch that was in flight is sent again, same webhook-id, and then everything after it, in order.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { ApiClient } from '../../src/client/api.js';
import { connectGateway, provisionGateway } from '../helpers/mqtt.js';
import { freePort, spawnServe, stop, type ServeProcess } from '../helpers/serve-process.js';
import { CUSTOMER } from '../helpers/server.js';
import { testDatabase, type TestDatabase } from '../helpers/test-store.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const PASSWORD = 'kill-test-password-1';
const running: ServeProcess[] = [];
let receiver: WebhookReceiver | undefined;
let database: TestDatabase | undefined;
const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-webhook-kill-'));

afterAll(async () => {
  await Promise.all(running.map(stop));
  await receiver?.stop();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function serve(port: number, mqttPort: number): Promise<ApiClient> {
  const env = { SCANHUB_CUSTOMER_ID: CUSTOMER, SCANHUB_ADMIN_PASSWORD: PASSWORD, SCANHUB_WEBHOOK_ALLOW_LOOPBACK: '1', SCANHUB_MQTT_PUBLIC_HOST: 'localhost' };
  const process = spawnServe(['--data-dir', dataDir, '--port', String(port), '--mqtt-port', String(mqttPort)], env, database);
  running.push(process);
  await process.stderrMatches(/scanhub is serving .*\n/);
  const url = `http://127.0.0.1:${port}`;
  const { id_token } = await new ApiClient(url).post<{ id_token: string }>('/auth/login', { email: 'admin@localhost', password: PASSWORD });
  return new ApiClient(url, id_token);
}

it('resends the batch in flight at a kill -9 after the restart, then the rest, in order, nothing missing', async () => {
  database = await testDatabase();
  receiver = await new WebhookReceiver().start();
  const [port, mqttPort] = [await freePort(), await freePort()];
  const admin = await serve(port, mqttPort);
  const { secret } = await admin.post<{ secret: string }>(`/${CUSTOMER}/webhooks`, { url: receiver.url, event_types: ['event.scan'] });
  receiver.secrets = [secret];
  // The first message is held unanswered: serve is killed while it waits for the answer.
  const held: string[] = [];
  let gotHeld: () => void;
  const heldOne = new Promise<void>((resolve) => (gotHeld = resolve));
  receiver.answer = (message) => {
    held.push(message.id);
    gotHeld();
    return new Promise<number>(() => undefined);
  };

  const gateway = await provisionGateway({ admin, anonymous: new ApiClient(admin.baseUrl) });
  const client = await connectGateway(gateway);
  const ids = Array.from({ length: 30 }, () => randomUUID());
  for (const id of ids.slice(0, 10)) await client.publishAsync(gateway.topic, JSON.stringify({ id, type: 'scan', scan_code: 'K', device_id: 'ring-1' }), { qos: 1 });
  await heldOne;
  const killed = running.pop()!;
  killed.child.kill('SIGKILL');
  expect(await killed.exited).toEqual({ code: null, signal: 'SIGKILL' });
  await client.endAsync(true);

  receiver.answer = () => 200;
  await serve(port, mqttPort);
  const again = await connectGateway(gateway);
  for (const id of ids.slice(10)) await again.publishAsync(gateway.topic, JSON.stringify({ id, type: 'scan', scan_code: 'K', device_id: 'ring-1' }), { qos: 1 });
  await again.endAsync();
  await receiver.waitFor((r) => r.events().length >= ids.length, 30_000, 'the 30 scans');
  expect(receiver.events().map((e) => e.id)).toEqual(ids);
  // The batch that was in flight came again under its webhook-id.
  expect(receiver.messages[0]!.id).toBe(held[0]);
}, 90_000);
