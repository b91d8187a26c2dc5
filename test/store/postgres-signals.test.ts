import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Signal, Store } from '../../src/store/ports/index.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';
import { until } from '../helpers/until.js';

// Signals between instances over LISTEN/NOTIFY: two stores on one database stand for two
// instances; a private cluster is stopped and started to check that listening comes back.

const T0 = Date.UTC(2024, 0, 1);

/** The signals a store hears, and a way to wait for the next one that matches. */
function heard(store: Store) {
  const signals: Signal[] = [];
  const waiters: { match: (signal: Signal) => boolean; resolve: (signal: Signal) => void }[] = [];
  store.signals.subscribe((signal) => {
    signals.push(signal);
    for (const waiter of waiters.splice(0)) {
      if (waiter.match(signal)) waiter.resolve(signal);
      else waiters.push(waiter);
    }
  });
  return {
    signals,
    next: (match: (signal: Signal) => boolean) => new Promise<Signal>((resolve) => waiters.push({ match, resolve })),
  };
}

describePostgres('signals over LISTEN/NOTIFY', () => {
  let cluster: PgCluster;
  let a: Store;
  let b: Store;

  beforeAll(async () => {
    cluster = await startPgCluster();
    const url = await freshDatabase(cluster.url);
    const locator = { kind: 'postgres', url, masterKey: new Uint8Array(32) } as const;
    a = await openPostgresStore(locator, 'server');
    b = await openPostgresStore(locator, 'server');
    await a.customers.bootstrap('acme', { id: 'u1', customer_id: 'acme', email: 'a@example.com', roles: ['ADMIN_ROLE'], created: T0 }, T0);
    await a.gateways.createAll('acme', [{ id: 'gw-1', name: 'G1', usecase: 'u', station: 's' }, { id: 'gw-2', name: 'G2', usecase: 'u', station: 's' }], T0);
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await cluster?.destroy();
  });

  it('delivers a published signal to every instance, the sender too', async () => {
    const onA = heard(a);
    const onB = heard(b);
    await Promise.all([a.signals.listening(), b.signals.listening()]);
    const signal: Signal = { kind: 'gateways-connected', instance: 'instance-a', gateway_ids: ['gw-1', 'gw-2'] };
    const [atA, atB] = await Promise.all([onA.next((s) => s.kind === 'gateways-connected'), onB.next((s) => s.kind === 'gateways-connected'), a.signals.publish(signal)]);
    expect(atA).toEqual(signal);
    expect(atB).toEqual(signal);
  });

  it('sends gateway-deleted with the deletion itself, and nothing when nothing was deleted', async () => {
    const onB = heard(b);
    await b.signals.listening();
    const deleted = onB.next((s) => s.kind === 'gateway-deleted');
    expect(await a.gateways.markDeleted('acme', 'GW-1', T0 + 1)).toBe(true);
    expect(await deleted).toEqual({ kind: 'gateway-deleted', gateway_id: 'gw-1' });
    // A second delete changes nothing and says nothing: the marker signal after it comes first.
    expect(await a.gateways.markDeleted('acme', 'gw-1', T0 + 2)).toBe(false);
    const marker = onB.next((s) => s.kind === 'gateways-connected');
    await a.signals.publish({ kind: 'gateways-connected', instance: 'marker', gateway_ids: [] });
    await marker;
    expect(onB.signals.filter((s) => s.kind === 'gateway-deleted')).toEqual([{ kind: 'gateway-deleted', gateway_id: 'gw-1' }]);
  });

  it('says why while PostgreSQL is down, listens again by itself, runs the resume handlers, and hears signals after', async () => {
    const onB = heard(b);
    let resumed = 0;
    b.signals.onResume(() => resumed++);
    await b.signals.listening();
    await cluster.stop();
    await until(() => b.signals.fault() !== undefined, { what: 'the fault of the signals', timeoutMs: 60_000 });
    expect(b.signals.fault()).toMatch(/^not hearing other instances \(LISTEN scanhub\): .+; retrying$/);
    expect(resumed).toBe(0);
    await cluster.start();
    await until(() => b.signals.fault() === undefined, { what: 'the fault of the signals', timeoutMs: 60_000 });
    expect(resumed).toBe(1);
    const after = onB.next((s) => s.kind === 'gateway-deleted');
    expect(await a.gateways.markDeleted('acme', 'gw-2', T0 + 3)).toBe(true);
    expect(await after).toEqual({ kind: 'gateway-deleted', gateway_id: 'gw-2' });
  }, 60_000);
});
