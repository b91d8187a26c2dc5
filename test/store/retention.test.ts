// Retention over both stores (docs/retention.md): the period and its audit entry, one batch of the
// deletion (half-open cutoff, oldest first, one customer only), and the sweeper's passes over a
// store: exactly the events before the cutoff go, in batches, recorded as the last deletion; a
// period set to for ever meanwhile stops a running pass.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/domain/audit.js';
import { DAY_MS } from '../../src/domain/retention.js';
import { RetentionSweeper } from '../../src/retention/sweeper.js';
import { openStore, sqliteLocator } from '../../src/store/open.js';
import type { Store } from '../../src/store/ports/index.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { eventRow } from '../helpers/events.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';

const T0 = 1_800_000_000_000;
const END = { created: Number.MAX_SAFE_INTEGER, id: '' };

function admin(customer: string) {
  return { id: `admin-${customer}`, customer_id: customer, email: `admin@${customer}.example`, roles: ['ADMIN_ROLE'], created: T0 };
}

/** The stored `created` values of the customer, oldest first. */
async function createdOf(store: Store, customer: string): Promise<number[]> {
  return (await store.events.oldestAfter(customer, { created: Number.MIN_SAFE_INTEGER, id: '' }, END.created, 1_000_000)).map((row) => row[3] as number);
}

function auditOf(n: number) {
  return (previous: number | null): AuditEntry => ({
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    customerId: 'acme',
    time: T0 + n,
    action: 'retention.set',
    actor: { type: 'user', id: 'admin-acme' },
    target: { type: 'retention', id: 'acme' },
    details: { previous_events_days: previous },
  });
}

function contract(open: () => Promise<Store>): void {
  let store: Store;
  beforeAll(async () => {
    store = await open();
    for (const customer of ['acme', 'other', 'third']) expect(await store.customers.createWithAdmin(customer, admin(customer), T0)).toBe('created');
  });
  afterAll(async () => {
    await store?.close();
  });

  it('keeps events for ever until a period is set; set answers the record and audits the previous period', async () => {
    expect(await store.retention.get('acme')).toEqual({ events_days: null, last_deletion: null });
    expect(await store.retention.periods()).toEqual([]);
    expect(await store.retention.set('acme', 30, T0, auditOf(1))).toEqual({ events_days: 30, last_deletion: null });
    expect(await store.retention.set('acme', 7, T0 + 1, auditOf(2))).toEqual({ events_days: 7, last_deletion: null });
    expect(await store.retention.set('other', 36_500, T0 + 2)).toEqual({ events_days: 36_500, last_deletion: null });
    expect(await store.retention.periods()).toEqual([
      { customerId: 'acme', eventsDays: 7 },
      { customerId: 'other', eventsDays: 36_500 },
    ]);
    expect(await store.retention.set('acme', null, T0 + 3, auditOf(3))).toEqual({ events_days: null, last_deletion: null });
    expect(await store.retention.periods()).toEqual([{ customerId: 'other', eventsDays: 36_500 }]);
    const entries = (await store.audit.newestBefore('acme', 0, { time: Number.MAX_SAFE_INTEGER, id: '' }, 10, 'retention.set')).entries;
    expect(entries.map((entry) => [entry.time, entry.details])).toEqual([
      [T0 + 3, { previous_events_days: 7 }],
      [T0 + 2, { previous_events_days: 30 }],
      [T0 + 1, { previous_events_days: null }],
    ]);
  });

  it('deletes one batch: up to limit events with created < cutoff, oldest first, of that customer only', async () => {
    const cutoff = T0 + 1000;
    // Four events in the millisecond before the cutoff (ordered by id), one at it, one after.
    const rows = [
      eventRow({ created: cutoff - 5, id: 'e-0' }),
      ...['e-4', 'e-2', 'e-3', 'e-1'].map((id) => eventRow({ created: cutoff - 1, id })),
      eventRow({ created: cutoff, id: 'e-5' }),
      eventRow({ created: cutoff + 1, id: 'e-6' }),
    ];
    await store.events.insert('third', rows);
    await store.events.insert('other', [eventRow({ created: cutoff - 10, id: 'o-1' })]);
    const first = await store.retention.deleteEventsBefore('third', cutoff, 3);
    expect(first.deleted).toBe(3);
    expect(first.holdMs).toBeGreaterThan(0);
    const ids = async () => (await store.events.oldestAfter('third', { created: 0, id: '' }, END.created, 100)).map((row) => row[0]);
    expect(await ids()).toEqual(['e-3', 'e-4', 'e-5', 'e-6']);
    expect(first.last).toEqual({ created: cutoff - 1, id: 'e-2' });
    // From that position on: an event behind it (arrived late) is left to a later pass.
    await store.events.insert('third', [eventRow({ created: cutoff - 3, id: 'late' })]);
    const second = await store.retention.deleteEventsBefore('third', cutoff, 3, first.last);
    expect({ deleted: second.deleted, last: second.last }).toEqual({ deleted: 2, last: { created: cutoff - 1, id: 'e-4' } });
    expect(await store.retention.deleteEventsBefore('third', cutoff, 3, second.last)).toEqual({ deleted: 0, holdMs: expect.any(Number) });
    expect(await ids()).toEqual(['late', 'e-5', 'e-6']);
    expect((await store.retention.deleteEventsBefore('third', cutoff, 3)).deleted).toBe(1);
    expect(await ids()).toEqual(['e-5', 'e-6']);
    expect(await createdOf(store, 'other')).toEqual([cutoff - 10]);
  });

  it('deletes by the event key: the same id of another customer, or of a newer event, stays', async () => {
    const cutoff = T0 + 2000;
    const shared = '6f1c2d3e-0000-4000-8000-000000000001';
    await store.events.insert('third', [eventRow({ created: cutoff - 2, id: shared }), eventRow({ created: cutoff + 5, id: shared })]);
    await store.events.insert('other', [eventRow({ created: cutoff - 20, id: shared })]);
    const before = await store.events.oldestAfter('third', { created: 0, id: '' }, END.created, 100);
    const batch = await store.retention.deleteEventsBefore('third', cutoff, 100);
    const after = await store.events.oldestAfter('third', { created: 0, id: '' }, END.created, 100);
    expect(batch.deleted).toBe(before.length - after.length);
    expect(after.filter((row) => row[0] === shared).map((row) => row[3])).toEqual([cutoff + 5]);
    expect((await store.events.oldestAfter('other', { created: 0, id: '' }, END.created, 100)).filter((row) => row[0] === shared).map((row) => row[3])).toEqual([cutoff - 20]);
  });

  it('records the last finished deletion', async () => {
    const deletion = { started: T0, finished: T0 + 2500, cutoff: T0 - DAY_MS, deleted: 1234, batches: 12, longest_batch_ms: 9.5 };
    await store.retention.set('third', 1, T0);
    await store.retention.recordDeletion('third', deletion);
    expect(await store.retention.get('third')).toEqual({ events_days: 1, last_deletion: deletion });
    // A new period keeps the record of the last deletion.
    expect(await store.retention.set('third', 2, T0 + 1)).toEqual({ events_days: 2, last_deletion: deletion });
  });
}

/** The sweeper over a store: which events a pass deletes, how it records and paces itself. */
function sweeps(open: () => Promise<Store>): void {
  let store: Store;
  let now = T0;
  beforeAll(async () => {
    store = await open();
    for (const customer of ['kept', 'swept', 'forever']) expect(await store.customers.createWithAdmin(customer, admin(customer), T0)).toBe('created');
  });
  afterAll(async () => {
    await store?.close();
  });

  it('deletes exactly the events older than the period, in batches, for each customer with one, and records it', async () => {
    const cutoff = now - 30 * DAY_MS;
    const old = Array.from({ length: 2000 }, (_, i) => eventRow({ created: cutoff - 1 - (i % 500) }));
    const young = [cutoff, cutoff, cutoff + 1, now].map((created) => eventRow({ created }));
    await store.events.insert('swept', [...old, ...young]);
    await store.events.insert('forever', old.slice(0, 10).map((row) => ({ ...row, id: `forever-${row.id}` })));
    await store.events.insert('kept', [eventRow({ created: now - 31 * DAY_MS })]);
    await store.retention.set('swept', 30, now);
    await store.retention.set('kept', 365, now);
    const batches: number[] = [];
    const sweeper = new RetentionSweeper({ store, clock: () => now, minPauseMs: 0, maxDeletedPerSecond: Infinity, onBatch: ({ deleted }) => void batches.push(deleted) });
    const pass = await sweeper.run();
    expect(pass.ran).toBe(true);
    const swept = pass.ran ? pass.customers : [];
    expect(swept.map((c) => [c.customerId, c.deletion.deleted, c.stopped])).toEqual([
      ['kept', 0, false],
      ['swept', 2000, false],
    ]);
    // Many small batches (the first has 100 rows; later ones fit the target hold), none empty.
    expect(batches[0]).toBe(100);
    expect(batches.reduce((a, b) => a + b, 0)).toBe(2000);
    expect(swept[1]!.deletion.batches).toBe(batches.length);
    expect(batches.length).toBeGreaterThan(1);
    expect(await createdOf(store, 'swept')).toEqual([cutoff, cutoff, cutoff + 1, now]);
    expect(await createdOf(store, 'kept')).toEqual([now - 31 * DAY_MS]);
    expect(await createdOf(store, 'forever')).toHaveLength(10);
    const recorded = (await store.retention.get('swept')).last_deletion!;
    expect(recorded).toEqual({ ...swept[1]!.deletion, cutoff, started: now, finished: now });
    expect(recorded.longest_batch_ms).toBeGreaterThan(0);
    expect((await store.retention.get('kept')).last_deletion).toEqual({ started: now, finished: now, cutoff: now - 365 * DAY_MS, deleted: 0, batches: 0, longest_batch_ms: 0 });
    await sweeper.close();
  });

  it('stops a running pass when the period is set to for ever meanwhile, and records what it deleted', async () => {
    now += DAY_MS;
    await store.events.insert('swept', Array.from({ length: 1000 }, (_, i) => eventRow({ created: now - 40 * DAY_MS + i })));
    const sweeper = new RetentionSweeper({
      store,
      clock: () => now,
      minPauseMs: 0,
      recheckMs: 0,
      onBatch: async ({ batch }) => {
        if (batch === 2) await store.retention.set('swept', null, now);
      },
    });
    const pass = await sweeper.run();
    const [swept] = pass.ran ? pass.customers.filter((c) => c.customerId === 'swept') : [];
    // The first batch of 100 and the second (of up to 200) went; the rest stays.
    expect(swept!.deletion.batches).toBe(2);
    expect(swept!.deletion.deleted).toBeGreaterThan(100);
    expect(await createdOf(store, 'swept')).toHaveLength(1004 - swept!.deletion.deleted);
    expect((await store.retention.get('swept')).last_deletion).toEqual(swept!.deletion);
    await sweeper.close();
  });

  it('runs one pass after another: run() waits for the running pass and starts a new one', async () => {
    await store.retention.set('swept', 30, now);
    const sweeper = new RetentionSweeper({ store, clock: () => now, minPauseMs: 0, maxDeletedPerSecond: Infinity });
    const [first, second] = await Promise.all([sweeper.run(), sweeper.run()]);
    // Both callers asked before the first pass started: they share it.
    expect(first).toBe(second);
    const third = await sweeper.run();
    expect(third.ran && third.customers.find((c) => c.customerId === 'swept')!.deletion.deleted).toBe(0);
    // What the stopped pass left, and the events of the first test that are now past 30 days, went.
    expect(await createdOf(store, 'swept')).toEqual([now - DAY_MS]);
    await sweeper.close();
    expect(await sweeper.run()).toEqual({ ran: false });
  });
}

describe('SQLite store: retention', () => {
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-retention-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  describe('the repository', () => contract(() => openStore(sqliteLocator(mkdtempSync(join(dir, 'repo-'))), 'server')));
  describe('the sweeper', () => sweeps(() => openStore(sqliteLocator(mkdtempSync(join(dir, 'sweeps-'))), 'server')));
});

describePostgres('PostgreSQL store: retention', () => {
  const open = async () => openPostgresStore({ kind: 'postgres', url: await freshDatabase(), masterKey: new Uint8Array(32).fill(7) }, 'server');
  describe('the repository', () => contract(open));
  describe('the sweeper', () => sweeps(open));
});
