import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiCommand } from '../../src/domain/commands.js';
import { GatewayClients, atInstance, provisionGateway } from '../helpers/mqtt.js';
import { CUSTOMER, secondInstance, startTestServer, type TestServer } from '../helpers/server.js';
import { requirePostgresProject } from '../helpers/test-store.js';
import { until } from '../helpers/until.js';

// Commands on a scale-out deployment (docs/commands.md "Delivery"): two instances on one PostgreSQL
// database. A command created through one reaches the gateway subscribed on the other (the
// `commands-queued` NOTIFY sent with the commit); a bulk call through B reaches gateways held by A
// and B alike; the response through either is read through both.
// (PostgreSQL only: a .postgres.test.ts file, test/README.md.)

requirePostgresProject(import.meta.url);

let a: TestServer;
let b: TestServer;
const clients = new GatewayClients();

beforeAll(async () => {
  a = await startTestServer();
  b = await secondInstance(a);
});
afterAll(async () => {
  await clients.endAll();
  await b?.close();
  await a?.close();
});

/** A gateway subscribed to its commands on instance `t`, with the command ids it receives. */
async function subscribedOn(t: TestServer) {
  const gateway = await provisionGateway(a);
  const client = await clients.connect(atInstance(t, gateway));
  const received: string[] = [];
  client.on('message', (_topic, payload) => received.push((JSON.parse(payload.toString()) as { command_id: string }).command_id));
  await client.subscribeAsync(`${gateway.topic}/commands`, { qos: 1 });
  return { gateway, client, received };
}

describe('commands on two instances', () => {
  it('a command created through A reaches the gateway on B at once; its response through B reads SUCCEEDED through A', async () => {
    const { gateway, client, received } = await subscribedOn(b);
    const command = await a.admin.post<ApiCommand>(`/${CUSTOMER}/gateways/${gateway.id}/commands`, { name: 'feedback', parameters: { sequence: 'WARNING' } });
    await until(() => received.length === 1, { what: 'the command on B', timeoutMs: 5000 });
    expect(received).toEqual([command.command_id]);
    await until(() => a.admin.get<ApiCommand>(`/${CUSTOMER}/commands/${command.command_id}`), (c) => c.status === 'DELIVERED');
    await client.publishAsync(`${gateway.topic}/command-responses`, JSON.stringify({ command_id: command.command_id, status: 'SUCCEEDED' }), { qos: 1 });
    expect(await a.admin.get<ApiCommand>(`/${CUSTOMER}/commands/${command.command_id}`)).toMatchObject({ status: 'SUCCEEDED' });
  });

  it('one bulk call through B reaches gateways held by A and by B', async () => {
    const onA = await subscribedOn(a);
    const onB = await subscribedOn(b);
    const created = await b.admin.post<ApiCommand[]>(`/${CUSTOMER}/commands`, { gateway_ids: [onA.gateway.id, onB.gateway.id], name: 'display', parameters: { template: 'x' } });
    await until(() => onA.received.length + onB.received.length === 2, { what: 'both commands', timeoutMs: 5000 });
    expect([onA.received, onB.received]).toEqual([[created[0]!.command_id], [created[1]!.command_id]]);
  });
});
