import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/client/api.js';
import { call } from '../helpers/http.js';
import { GatewayClients, atInstance, closedAt, provisionGateway } from '../helpers/mqtt.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, secondInstance, startTestServer, type TestServer } from '../helpers/server.js';
import { requirePostgresProject } from '../helpers/test-store.js';

// Two instances of the service on one PostgreSQL database, in this process but each with its own
// HTTP and MQTT listeners and its own store (pool and LISTEN connection): the cross-instance
// signals of DESIGN.md "Scale-out" over real sockets and a real server. (PostgreSQL only:
// vitest.config.ts; test/cluster/haproxy.postgres.test.ts does the same with processes behind HAProxy.)

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

const scan = (id: string) => JSON.stringify({ id, type: 'scan', scan_code: 'A-1', created: 1_700_000_000_000 });

describe('two instances on one database', () => {
  it('share the deployment: one CA, and an IdToken of A works on B', async () => {
    expect(b.server.ctx.ca.certPem).toBe(a.server.ctx.ca.certPem);
    const users = await new ApiClient(b.url, a.adminToken).get<{ items: { email: string }[] }>(`/${CUSTOMER}/users`);
    expect(users.items.map((user) => user.email)).toEqual(['admin@example.com']);
  });

  it('a gateway connecting to B closes its older connection on A', async () => {
    const gateway = await provisionGateway(a);
    const onA = await clients.connect(atInstance(a, gateway));
    const closedOnA = closedAt(onA);
    const onB = await clients.connect(atInstance(b, gateway));
    await closedOnA;
    // The newer connection stays and is acknowledged.
    await onB.publishAsync(gateway.topic, scan('5b0c3c52-1f0e-4a7d-9c61-3b1f2d4e5a01'), { qos: 1 });
    expect(onB.connected).toBe(true);
    expect([a.server.broker.stats.connected, b.server.broker.stats.connected]).toEqual([0, 1]);
  });

  it('a gateway deleted through A is disconnected from B within one second and refused on reconnect', async () => {
    const gateway = await provisionGateway(a);
    const onB = await clients.connect(atInstance(b, gateway));
    const closedOnB = closedAt(onB);
    const deleting = Date.now();
    await a.admin.delete(`/${CUSTOMER}/gateways/${gateway.id}`);
    expect((await closedOnB) - deleting).toBeLessThan(1000);
    await expect(clients.connect(atInstance(b, gateway))).rejects.toMatchObject({ code: 5 });
    await expect(clients.connect(atInstance(a, gateway))).rejects.toMatchObject({ code: 5 });
  });

  it('count refused log-ins together: 5 on A and 5 on B lock the address on both', async () => {
    const login = (t: TestServer, password: string) => call(t.url, 'POST', '/auth/login', { json: { email: ADMIN_EMAIL, password } });
    // The administrator's tokens, issued before, keep working for the other tests.
    for (const t of [a, b, a, b, a, b, a, b, a, b]) expect((await login(t, 'not-the-password')).status).toBe(401);
    for (const t of [a, b]) {
      const answer = await login(t, ADMIN_PASSWORD);
      expect([answer.status, (answer.body as { title: string }).title]).toEqual([429, 'Too Many Requests']);
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(890);
    }
  });

  it('an API key revoked through A is refused on B from the next request on', async () => {
    const created = await a.admin.post<{ id: string; key: string; name: string }>(`/${CUSTOMER}/api-keys`, { name: 'ci-two-instances', permissions: ['event.read'] });
    const listEvents = (t: TestServer) => call(t.url, 'GET', `/${CUSTOMER}/events`, { token: created.key });
    expect([(await listEvents(a)).status, (await listEvents(b)).status]).toEqual([200, 200]);
    await a.admin.delete(`/${CUSTOMER}/api-keys/${created.id}`);
    const refused = await listEvents(b);
    expect(refused.status).toBe(401);
    expect((refused.body as { details: string }).details).toMatch(/^The API key "ci-two-instances" was revoked at .+: create a new one\.$/);
  });

  it('both report signals ok in /healthz', async () => {
    for (const t of [a, b]) expect(await t.anonymous.get<{ signals: string }>('/healthz')).toMatchObject({ status: 'ok', signals: 'ok', database: 'ok' });
  });
});
