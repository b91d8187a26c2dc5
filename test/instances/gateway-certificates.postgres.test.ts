import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClients, atInstance, closedAt, provisionGateway, type Provisioned, type TestGateway } from '../helpers/mqtt.js';
import { CUSTOMER, secondInstance, startTestServer, type TestServer } from '../helpers/server.js';
import { requirePostgresProject } from '../helpers/test-store.js';

// Revocation on a scale-out deployment (DESIGN.md "Scale-out", "Trust"): two instances on one
// PostgreSQL database, each with its own MQTT listener and LISTEN connection. The revocation
// committed through one instance closes the connection another holds, over pg_notify.
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


describe('gateway certificates on two instances', () => {
  it('a revocation through A disconnects the gateway held by B within one second; both refuse it after', async () => {
    const gateway = await provisionGateway(a);
    const onB = await clients.connect(atInstance(b, gateway));
    const closedOnB = closedAt(onB);
    const revoking = Date.now();
    const revoked = await a.admin.post<{ status: string }>(`/${CUSTOMER}/gateways/${gateway.id}/revoke-certificate`);
    expect(revoked.status).toBe('revoked');
    expect((await closedOnB) - revoking).toBeLessThan(1000);
    await expect(clients.connect(atInstance(b, gateway))).rejects.toMatchObject({ code: 5 });
    await expect(clients.connect(atInstance(a, gateway))).rejects.toMatchObject({ code: 5 });
  });

  it('a re-provisioning token redeemed through B closes the old certificate’s connection on A', async () => {
    const gateway = await provisionGateway(a);
    const onA = await clients.connect(atInstance(a, gateway));
    const { token } = await a.admin.post<{ token: string }>(`/${CUSTOMER}/gateways/${gateway.id}/reprovision`);
    const closedOnA = closedAt(onA);
    const redeeming = Date.now();
    const provisioned = await b.anonymous.post<Provisioned>('/provisioning', { token });
    expect((await closedOnA) - redeeming).toBeLessThan(1000);
    const device: TestGateway = { ...gateway, pkcs12: Buffer.from(provisioned.pkcs12, 'base64') };
    const fresh = await clients.connect(atInstance(a, device));
    await fresh.publishAsync(gateway.topic, JSON.stringify({ id: '1d7e3a52-5f0e-4a7d-9c61-3b1f2d4e5a01', type: 'scan', scan_code: 'A-1' }), { qos: 1 });
    await expect(clients.connect(atInstance(b, gateway))).rejects.toMatchObject({ code: 5 });
  });
});
