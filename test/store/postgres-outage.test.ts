import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Outcome } from '../../src/domain/ingest.js';
import { StoreUnavailable, type Store } from '../../src/store/ports/index.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';

const T0 = Date.UTC(2024, 0, 1);

describePostgres('PostgreSQL store when the server stops and comes back', () => {
  let cluster: PgCluster;
  let store: Store;

  beforeAll(async () => {
    cluster = await startPgCluster();
    const url = await freshDatabase(cluster.url);
    store = await openPostgresStore({ kind: 'postgres', url, masterKey: new Uint8Array(32) }, 'server');
    await store.customers.bootstrap('acme', { id: 'u1', customer_id: 'acme', email: 'a@example.com', roles: ['ADMIN_ROLE'], created: T0 }, T0);
    await store.gateways.createAll('acme', [{ id: 'gw', name: 'G', usecase: 'u', station: 's' }], T0);
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await cluster?.destroy();
  });

  it('throws StoreUnavailable from every kind of call, FAILS ingest without throwing, and recovers by itself', async () => {
    // Idle connections exist in the pool when the server goes away.
    await Promise.all([store.ping(), store.customers.count(), store.gateways.byId('acme', 'gw')]);
    await cluster.stop();

    await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailable);
    await expect(store.customers.count()).rejects.toBeInstanceOf(StoreUnavailable);
    await expect(store.gateways.createAll('acme', [{ id: 'gw2', name: 'G2', usecase: 'u', station: 's' }], T0)).rejects.toBeInstanceOf(StoreUnavailable);
    const refused = await store.jobConfigs.list('acme').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreUnavailable);
    expect((refused as Error).message).toMatch(/^PostgreSQL is unavailable: [^\n]+$/);

    const id = randomUUID();
    const payload = Buffer.from(JSON.stringify({ id, type: 'scan', scan_code: 'X' }));
    const failed = await store.ingest.commit([{ gatewayId: 'gw', receivedAt: T0, payload }, { gatewayId: 'gw', receivedAt: T0, payload }]);
    expect(failed.outcomes).toEqual([Outcome.FAILED, Outcome.FAILED]);
    expect(failed.events).toBe(0);

    await cluster.start();
    await expect(store.ping()).resolves.toBeUndefined();
    expect(await store.customers.count()).toBe(1);
    const stored = await store.ingest.commit([{ gatewayId: 'gw', receivedAt: T0, payload }]);
    expect(stored.outcomes).toEqual([Outcome.STORED]);
    expect(stored.events).toBe(1);
  }, 60_000);

  it('cannot be opened while the server is down', async () => {
    await cluster.stop();
    try {
      const url = cluster.url;
      await expect(openPostgresStore({ kind: 'postgres', url, masterKey: new Uint8Array(32) }, 'reader')).rejects.toBeInstanceOf(StoreUnavailable);
    } finally {
      await cluster.start();
    }
  }, 60_000);
});
