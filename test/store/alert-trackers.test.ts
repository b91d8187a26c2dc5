// The alert evaluator's state over both stores (docs/alerts.md "Jobs", "Connectivity"): the job
// tracker's row moves only from the cursor it was read at, and a gateway's recorded connectivity
// only from the one read, so an instance that lost the lease meanwhile writes nothing.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store, TrackerState } from '../../src/store/ports/index.js';
import { describePostgres } from '../helpers/postgres.js';
import { ownDatabase, type OwnDatabase } from '../helpers/test-store.js';

const CUSTOMER = 'acme';

function contract(kind: 'sqlite' | 'postgres'): void {
  let database: OwnDatabase;
  let store: Store;

  beforeAll(async () => {
    database = await ownDatabase(kind);
    store = await database.open();
    await store.customers.createWithAdmin(CUSTOMER, { id: randomUUID(), customer_id: CUSTOMER, email: 'admin@acme.example', roles: ['ADMIN_ROLE'], created: 0 }, 0);
  });
  afterAll(async () => {
    await database?.close();
  });

  it('a tracker starts once, and moves only from the cursor it was read at', async () => {
    const head = await store.eventLog.head();
    const start: TrackerState = { cursor: head, started: 1_000, open_jobs: [], last_scans: {} };
    await store.alerts.startTracker(CUSTOMER, start);
    await store.alerts.startTracker(CUSTOMER, { ...start, started: 2_000 });
    expect(await store.alerts.tracker(CUSTOMER)).toEqual(start);
    expect(await store.alerts.trackedCustomers()).toEqual([CUSTOMER]);

    const later = head.map((n, i) => (i === head.length - 1 ? n + 5 : n));
    const next: TrackerState = { cursor: later, started: 1_000, open_jobs: [{ job_config_id: 'c', gateway_id: 'g', start_event_id: 'e', opened_at: 7 }], last_scans: { g: 7 } };
    // No webhook takes job.completed: the message is queued for none.
    expect(await store.alerts.advanceTracker(CUSTOMER, head, next, ['{"job_config_id":"c"}'], 9)).toEqual([]);
    expect(await store.alerts.tracker(CUSTOMER)).toEqual(next);
    // Another instance read it at `head` before: it writes nothing.
    expect(await store.alerts.advanceTracker(CUSTOMER, head, { ...next, last_scans: {} }, [], 10)).toBeUndefined();
    expect(await store.alerts.tracker(CUSTOMER)).toEqual(next);

    await store.alerts.dropTracker(CUSTOMER);
    expect(await store.alerts.tracker(CUSTOMER)).toBeUndefined();
    expect(await store.alerts.trackedCustomers()).toEqual([]);
  });

  it('a gateway connectivity is recorded once, then changes only from the one read', async () => {
    expect(await store.alerts.recordConnectivity(CUSTOMER, 'gw-1', null, 'REGISTERING', 1, null)).toEqual([]);
    expect(await store.alerts.recordConnectivity(CUSTOMER, 'gw-1', null, 'ACTIVE', 2, null)).toBeUndefined();
    expect(await store.alerts.connectivity(CUSTOMER)).toEqual({ 'gw-1': 'REGISTERING' });
    expect(await store.alerts.recordConnectivity(CUSTOMER, 'gw-1', 'REGISTERING', 'ACTIVE', 3, '{}')).toEqual([]);
    expect(await store.alerts.recordConnectivity(CUSTOMER, 'gw-1', 'REGISTERING', 'INACTIVE', 4, '{}')).toBeUndefined();
    expect(await store.alerts.connectivity(CUSTOMER)).toEqual({ 'gw-1': 'ACTIVE' });
    expect(await store.alerts.connectivity('other')).toEqual({});
  });
}

describe('SQLite store: alert trackers', () => contract('sqlite'));
describePostgres('PostgreSQL store: alert trackers', () => contract('postgres'));
