// On SQLite, `serve` runs the writes of command delivery (claims, PUBACKs, responses, expiry) in
// the ingest writer thread between its commits (docs/commands.md "Delivery"): the store's own
// command writer thread, which would compete with ingest for the write lock, never starts.
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ApiCommand } from '../../../src/domain/commands.js';
import { GatewayClients, provisionGateway } from '../../helpers/mqtt.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';
import { until } from '../../helpers/until.js';
import { TestClock } from '../../helpers/world.js';

let t: TestServer;
let clock: TestClock;
const clients = new GatewayClients();

beforeEach(async () => {
  clock = new TestClock();
  t = await startTestServer({ clock: clock.now });
});
afterEach(async () => {
  await clients.endAll();
  await t.close();
});

/** Whether the SQLite store's own command writer thread (command-writer.ts) runs: internals, read for this test only. */
const ownThreadRuns = () => (t.server.ctx.store.commands as unknown as { writer: { pool: { running: boolean } } }).writer.pool.running;

it('claims, the PUBACK, the response and the expiry sweep all commit, with the ingest writer thread doing them and no thread of their own', async () => {
  const gateway = await provisionGateway(t);
  const client = await clients.connect(gateway);
  const arrived = new Promise<void>((resolve) => client.once('message', () => resolve()));
  await client.subscribeAsync(`${gateway.topic}/commands`, { qos: 1 });
  const command = await t.admin.post<ApiCommand>(`/${CUSTOMER}/gateways/${gateway.id}/commands`, { name: 'feedback', parameters: { sequence: 'OK' } });
  const expiring = await t.admin.post<ApiCommand>(`/${CUSTOMER}/gateways/${gateway.id}/commands`, { name: 'later', ttl_seconds: 5 });
  await arrived;
  await until(() => t.admin.get<ApiCommand>(`/${CUSTOMER}/commands/${command.command_id}`), (c) => c.status === 'DELIVERED');
  await client.publishAsync(`${gateway.topic}/command-responses`, JSON.stringify({ command_id: command.command_id, status: 'SUCCEEDED' }), { qos: 1 });
  expect((await t.admin.get<ApiCommand>(`/${CUSTOMER}/commands/${command.command_id}`)).status).toBe('SUCCEEDED');
  await client.endAsync();
  clock.advance(5_000);
  // `expiring` went out too and was acknowledged by mqtt.js: DELIVERED, then past its end.
  expect(await t.server.ctx.store.commands.expire(clock.now(), 100)).toBe(1);
  expect((await t.admin.get<ApiCommand>(`/${CUSTOMER}/commands/${expiring.command_id}`)).status).toBe('EXPIRED');
  expect(ownThreadRuns()).toBe(false);
});
