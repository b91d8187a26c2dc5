// `command.status` webhooks (docs/commands.md "Webhooks"): each change of a command's status queues
// a message in the change's transaction, its data the command as GET /commands/{id} shows it; a
// real receiver verifies them with the `standardwebhooks` library. Expiry is audited as the others.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ApiCommand } from '../../../src/domain/commands.js';
import { GatewayClients, provisionGateway, type TestGateway } from '../../helpers/mqtt.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';
import { until } from '../../helpers/until.js';
import { WebhookReceiver } from '../../helpers/webhook-receiver.js';
import { TestClock } from '../../helpers/world.js';

let t: TestServer;
let clock: TestClock;
let receiver: WebhookReceiver;
const clients = new GatewayClients();

beforeAll(async () => {
  receiver = await new WebhookReceiver().start();
});
afterAll(async () => {
  await receiver.stop();
});
beforeEach(async () => {
  clock = new TestClock();
  t = await startTestServer({ clock: clock.now, webhookAllowLoopback: true });
  const created = await t.admin.post<{ secret: string }>(`/${CUSTOMER}/webhooks`, { url: receiver.url, event_types: ['command.status'] });
  receiver.secrets = [created.secret];
  receiver.messages.length = 0;
});
afterEach(async () => {
  await clients.endAll();
  await t.close();
});

const send = (gateway: TestGateway, body: object = { name: 'feedback', parameters: { sequence: 'OK' } }) =>
  t.admin.post<ApiCommand>(`/${CUSTOMER}/gateways/${gateway.id}/commands`, body);
const read = (command: ApiCommand) => t.admin.get<ApiCommand>(`/${CUSTOMER}/commands/${command.command_id}`);

/** The `command.status` messages the receiver accepted for the command: their `data`, in the order received. */
const messagesOf = (command: ApiCommand) =>
  receiver.messages.filter((m) => m.body.type === 'command.status' && (m.body.data as ApiCommand).command_id === command.command_id).map((m) => m.body.data as ApiCommand);

const statusesOf = (command: ApiCommand) => messagesOf(command).map((c) => c.status);

async function received(command: ApiCommand, count: number): Promise<ApiCommand[]> {
  await receiver.waitFor(() => messagesOf(command).length >= count, 20_000, `${count} command.status messages`);
  return messagesOf(command);
}

describe('command.status webhooks', () => {
  it('a command answered by a real MQTT client: QUEUED, DELIVERED, SUCCEEDED, in order, each the command as GET shows it then', async () => {
    const gateway = await provisionGateway(t);
    const client = await clients.connect(gateway);
    const arrived = new Promise<void>((resolve) => client.once('message', () => resolve()));
    await client.subscribeAsync(`${gateway.topic}/commands`, { qos: 1 });
    const command = await send(gateway);
    await arrived;
    const delivered = await until(() => read(command), (c) => c.status === 'DELIVERED');
    await client.publishAsync(`${gateway.topic}/command-responses`, JSON.stringify({ command_id: command.command_id, status: 'SUCCEEDED', details: 'beeped' }), { qos: 1 });
    const final = await read(command);
    expect(final.status).toBe('SUCCEEDED');
    expect(await received(command, 3)).toEqual([command, delivered, final]);
    expect(receiver.unverified).toEqual([]);
    expect(receiver.messages.every((m) => m.verifiedBy.length === 1)).toBe(true);
  });

  it('a command past its end: EXPIRED by the sweep, audited as the expiry (actor operator command-expiry)', async () => {
    const gateway = await provisionGateway(t);
    const command = await send(gateway, { name: 'feedback', parameters: { sequence: 'OK' }, ttl_seconds: 5 });
    clock.advance(5_000);
    const now = clock.now();
    expect(await t.server.ctx.store.commands.expire(now, 100)).toBe(1);
    const expired = await read(command);
    expect(expired).toMatchObject({ status: 'EXPIRED', last_updated: now });
    expect(await received(command, 2)).toEqual([command, expired]);
    const audit = await t.admin.get<{ items: { action: string; actor: object; target: object; details: object }[] }>(`/${CUSTOMER}/audit-log?action=command.expired`);
    expect(audit.items).toEqual([
      {
        ...audit.items[0],
        action: 'command.expired',
        actor: { type: 'operator', id: 'command-expiry' },
        target: { type: 'command', id: command.command_id },
        details: { gateway_id: gateway.id, name: 'feedback', expires_at: command.expires_at },
      },
    ]);
  });

  it('a cancel: CANCELED; a cancel too late stores EXPIRED, audited and sent as the sweep would', async () => {
    const gateway = await provisionGateway(t);
    const canceled = await send(gateway);
    const late = await send(gateway, { name: 'feedback', parameters: { sequence: 'OK' }, ttl_seconds: 5 });
    expect((await t.admin.post<ApiCommand>(`/${CUSTOMER}/commands/${canceled.command_id}/cancel`)).status).toBe('CANCELED');
    clock.advance(5_000);
    await expect(t.admin.post(`/${CUSTOMER}/commands/${late.command_id}/cancel`)).rejects.toMatchObject({ status: 409 });
    await received(canceled, 2);
    await received(late, 2);
    expect(statusesOf(canceled)).toEqual(['QUEUED', 'CANCELED']);
    expect(statusesOf(late)).toEqual(['QUEUED', 'EXPIRED']);
    const audit = await t.admin.get<{ items: { action: string; target: { id: string } }[] }>(`/${CUSTOMER}/audit-log?action=command.expired`);
    expect(audit.items.map((e) => e.target.id)).toEqual([late.command_id]);
  });
});
