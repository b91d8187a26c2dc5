// What makes two events the same event at ingest, over both stores (migrations SQLite 0014 and
// PostgreSQL 0009; docs/gateways-mqtt.md "Payloads"): its customer, `created` and id, or, when the
// service stamped `created` at receipt, its customer and id. A QoS 1 redelivery is ignored either
// way; one customer's ids never hide another customer's events.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_COLUMNS } from '../../src/domain/events.js';
import { Outcome, type IngestMessage } from '../../src/domain/ingest.js';
import { openStore, sqliteLocator } from '../../src/store/open.js';
import type { Store } from '../../src/store/ports/index.js';
import { migrations as postgresMigrations } from '../../src/store/postgres/migrations/index.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { migrations as sqliteMigrations } from '../../src/store/sqlite/migrations/index.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';
import { runSql, runSqliteSql } from '../helpers/test-store.js';

const T0 = 1_800_000_000_000;

function message(gatewayId: string, body: unknown, receivedAt: number): IngestMessage {
  return { gatewayId, receivedAt, payload: Buffer.from(JSON.stringify(body)) };
}

/** A store, and a way to run SQL on its database from another connection. */
interface Opened {
  store: Store;
  exec(sql: string): Promise<void>;
}

function contract(openWithSql: () => Promise<Opened>): void {
  let store: Store;
  let exec: Opened['exec'];
  beforeAll(async () => {
    ({ store, exec } = await openWithSql());
    for (const customer of ['acme', 'globex']) {
      await store.customers.createWithAdmin(customer, { id: `admin-${customer}`, customer_id: customer, email: `admin@${customer}.example`, roles: ['ADMIN_ROLE'], created: T0 }, T0);
      await store.gateways.createAll(customer, [{ id: `gw-${customer}`, name: 'G', usecase: 'line', station: 'st1' }, { id: `gw2-${customer}`, name: 'G2', usecase: 'line', station: 'st2' }], T0);
    }
  });
  afterAll(async () => {
    await store?.close();
  });

  /** The customer's events (id, created, scan_code), oldest first. */
  async function stored(customer: string): Promise<unknown[]> {
    const rows = await store.events.oldestAfter(customer, { created: 0, id: '' }, T0 + 1e9, 100);
    const [id, created, scanCode] = (['id', 'created', 'scan_code'] as const).map((column) => EVENT_COLUMNS.indexOf(column));
    return rows.map((row) => ({ id: row[id!], created: row[created!], scan_code: row[scanCode!] }));
  }

  it('a redelivered event with `created` is ignored, in one batch and in the next, and counted as a duplicate', async () => {
    const id = randomUUID();
    const event = { id, type: 'scan', scan_code: 'R-1', created: T0 + 10 };
    const first = await store.ingest.commit([message('gw-acme', event, T0 + 100), message('gw-acme', event, T0 + 200)]);
    const again = await store.ingest.commit([message('gw-acme', [event], T0 + 5000)]);
    expect([first.events, first.duplicates, again.events, again.duplicates]).toEqual([1, 1, 0, 1]);
    expect(await stored('acme')).toEqual([{ id, created: T0 + 10, scan_code: 'R-1' }]);
  });

  it('a redelivered event without `created` is stamped anew and still ignored: the first receipt time stays', async () => {
    const id = randomUUID();
    const event = { id, type: 'scan', scan_code: 'S-1' };
    const first = await store.ingest.commit([message('gw2-acme', event, T0 + 20_000)]);
    const again = await store.ingest.commit([message('gw2-acme', event, T0 + 25_000), message('gw-acme', { ...event, scan_code: 'S-2' }, T0 + 26_000)]);
    expect([first.events, first.duplicates, again.events, again.duplicates]).toEqual([1, 0, 0, 2]);
    expect((await stored('acme')).filter((row) => (row as { id: string }).id === id)).toEqual([{ id, created: T0 + 20_000, scan_code: 'S-1' }]);
  });

  it('the same id from another customer is another event: both stored', async () => {
    const withCreated = { id: randomUUID(), type: 'scan', scan_code: 'C-1', created: T0 + 30 };
    const stamped = { id: randomUUID(), type: 'scan', scan_code: 'C-2' };
    const acme = await store.ingest.commit([message('gw-acme', withCreated, T0 + 40_000), message('gw-acme', stamped, T0 + 40_000)]);
    const globex = await store.ingest.commit([message('gw-globex', withCreated, T0 + 41_000), message('gw-globex', stamped, T0 + 41_000)]);
    expect([acme.events, acme.duplicates, globex.events, globex.duplicates]).toEqual([2, 0, 2, 0]);
    expect(await stored('globex')).toEqual([
      { id: withCreated.id, created: T0 + 30, scan_code: 'C-1' },
      { id: stamped.id, created: T0 + 41_000, scan_code: 'C-2' },
    ]);
  });

  it('the same id with another `created` is another event (not a redelivery, which is an exact copy): both stored', async () => {
    const id = randomUUID();
    const result = await store.ingest.commit([
      message('gw-globex', { id, type: 'scan', scan_code: 'T-1', created: T0 + 50 }, T0 + 60_000),
      message('gw-globex', { id, type: 'scan', scan_code: 'T-2', created: T0 + 51 }, T0 + 60_000),
    ]);
    expect([result.events, result.duplicates]).toEqual([2, 0]);
    expect((await stored('globex')).filter((row) => (row as { id: string }).id === id)).toEqual([
      { id, created: T0 + 50, scan_code: 'T-1' },
      { id, created: T0 + 51, scan_code: 'T-2' },
    ]);
  });

  it("a statement the schema does not match (an older or newer version's) fails the batch, nothing acknowledged, rather than dropping its messages as invalid", async () => {
    const event = { id: randomUUID(), type: 'scan', scan_code: 'V-1', created: T0 + 80 };
    await exec('ALTER TABLE events RENAME COLUMN device_firmware TO device_firmware_renamed');
    try {
      const refused = await store.ingest.commit([message('gw-acme', event, T0 + 90_000), message('gw-acme', { ...event, id: randomUUID() }, T0 + 90_000)]);
      expect(refused.outcomes).toEqual([Outcome.FAILED, Outcome.FAILED]);
      expect(refused.reasons[0]).toMatch(/^commit failed: .*device_firmware/);
    } finally {
      await exec('ALTER TABLE events RENAME COLUMN device_firmware_renamed TO device_firmware');
    }
    const stored = await store.ingest.commit([message('gw-acme', event, T0 + 91_000)]);
    expect([stored.outcomes, stored.events]).toEqual([[Outcome.STORED], 1]);
  });

  it('events.insert (restores, tests) keys the same way: a row already stored is ignored', async () => {
    const row = {
      id: randomUUID(),
      class: 'event',
      type: 'scan',
      created: T0 + 70,
      scan_code: 'I-1',
      scan_duration: null,
      scan_decode_symbology: null,
      device_id: null,
      device_battery: null,
      device_firmware: null,
      device_temperature: null,
      gateway_id: 'gw-acme',
      gateway_usecase: null,
      gateway_station: null,
      metrics_worker_steps: null,
    };
    expect(await store.events.insert('acme', [row, row])).toBe(1);
    expect(await store.events.insert('globex', [row])).toBe(1);
    expect(await store.events.insert('acme', [{ ...row, created: T0 + 71 }])).toBe(1);
  });
}

describe('SQLite store: the event key of idempotent ingest', () => {
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-event-key-'));
  // Registered first, so it runs after the store is closed (hooks run in reverse).
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  contract(async () => ({
    store: await openStore(sqliteLocator(dir), 'server'),
    exec: async (sql) => void runSqliteSql(dir, sql),
  }));
});

describePostgres('PostgreSQL store: the event key of idempotent ingest', () => {
  contract(async () => {
    const url = await freshDatabase();
    return {
      store: await openPostgresStore({ kind: 'postgres', url, masterKey: new Uint8Array(32).fill(7) }, 'server'),
      exec: async (sql) => void (await runSql(url, sql)),
    };
  });
});

/** An event stored before the migration, and the same one redelivered after it. */
const OLD_ID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const OLD_EVENT = { id: OLD_ID, type: 'scan', scan_code: 'OLD', created: T0 + 5 };
const INSERT_OLD = `INSERT INTO events (id, customer_id, class, type, created, scan_code, gateway_id) VALUES ('${OLD_ID}', 'acme', 'event', 'scan', ${T0 + 5}, 'OLD', 'gw-acme')`;

/** Opened on the migrated database (which migrates it): OLD_EVENT redelivered is a duplicate, and stays the one event. Closes the store. */
async function expectRedeliveryIgnored(store: Store): Promise<void> {
  try {
    const result = await store.ingest.commit([message('gw-acme', OLD_EVENT, T0 + 100)]);
    expect([result.events, result.duplicates]).toEqual([0, 1]);
    expect((await store.events.oldestAfter('acme', { created: 0, id: '' }, T0 + 1e9, 10)).length).toBe(1);
  } finally {
    await store.close();
  }
}

describe('SQLite migration 0014_event_key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-event-key-migration-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the events stored before it; a redelivery of one is still ignored; the id index is gone', async () => {
    const db = new Database(join(dir, 'scanhub.db'));
    db.exec('CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied INTEGER NOT NULL)');
    for (const migration of sqliteMigrations.filter((m) => m.name < '0014')) {
      migration.up(db);
      db.prepare('INSERT INTO schema_migrations VALUES (?, 0)').run(migration.name);
    }
    db.exec(`INSERT INTO customers (id, created) VALUES ('acme', 0)`);
    db.exec(`INSERT INTO gateways (id, customer_id, name, usecase, station, version, created, last_updated) VALUES ('gw-acme', 'acme', 'G', 'line', 'st1', 1, ${T0}, ${T0})`);
    db.exec(INSERT_OLD);
    db.close();
    await expectRedeliveryIgnored(await openStore(sqliteLocator(dir), 'server'));
    const after = new Database(join(dir, 'scanhub.db'), { readonly: true });
    try {
      const indexes = after.prepare(`SELECT name, "unique", partial FROM pragma_index_list('events') ORDER BY name`).all();
      expect(indexes).toEqual([
        { name: 'events_customer_created', unique: 1, partial: 0 },
        { name: 'events_gateway_created', unique: 0, partial: 0 },
        { name: 'events_stamped_id', unique: 1, partial: 1 },
      ]);
    } finally {
      after.close();
    }
  });
});

describePostgres('PostgreSQL migration 0009_event_key', () => {
  it('keeps the events stored before it; a redelivery of one is still ignored; the primary key on the id is gone', async () => {
    const url = await freshDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query('CREATE TABLE schema_migrations (name text PRIMARY KEY, applied bigint NOT NULL)');
      for (const migration of postgresMigrations.filter((m) => m.name < '0009')) {
        await migration.up(client as unknown as pg.PoolClient);
        await client.query('INSERT INTO schema_migrations VALUES ($1, 0)', [migration.name]);
      }
      await client.query(`INSERT INTO customers (id, created) VALUES ('acme', 0)`);
      await client.query(`INSERT INTO gateways (id, customer_id, name, usecase, station, version, created, last_updated) VALUES ('gw-acme', 'acme', 'G', 'line', 'st1', 1, ${T0}, ${T0})`);
      await client.query(INSERT_OLD);
    } finally {
      await client.end();
    }
    await expectRedeliveryIgnored(await openPostgresStore({ kind: 'postgres', url, masterKey: new Uint8Array(32).fill(7) }, 'server'));
    const check = new pg.Client({ connectionString: url });
    await check.connect();
    try {
      const { rows } = await check.query(
        `SELECT c.relname AS name, i.indisunique AS unique, i.indisprimary AS primary, i.indpred IS NOT NULL AS partial
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'events'::regclass ORDER BY c.relname`,
      );
      expect(rows).toEqual([
        { name: 'events_commit_order', unique: false, primary: false, partial: true },
        { name: 'events_customer_created', unique: true, primary: false, partial: false },
        { name: 'events_gateway_created', unique: false, primary: false, partial: false },
        { name: 'events_gateway_long_scans', unique: false, primary: false, partial: true },
        { name: 'events_gateway_scans', unique: false, primary: false, partial: true },
        { name: 'events_stamped_id', unique: true, primary: false, partial: true },
      ]);
    } finally {
      await check.end();
    }
  });
});
