// What GET /metrics reads from the store at scrape time (src/server/metrics.ts), on both stores:
// export tasks by status and the database's size on disk.
import { randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewExportTask, Store } from '../../src/store/ports/index.js';
import { describePostgres } from '../helpers/postgres.js';
import { ownDatabase, type OwnDatabase } from '../helpers/test-store.js';

const CUSTOMER = 'acme';
const T0 = Date.UTC(2024, 4, 2);

function task(id: string): NewExportTask {
  return { id, customer_id: CUSTOMER, requested_by: 'u', start_time: T0 - 1000, end_time: T0, cells: 'safe', requested: T0 };
}

function metricsReadsSuite(kind: 'sqlite' | 'postgres'): void {
  let database: OwnDatabase;
  let store: Store;

  beforeEach(async () => {
    database = await ownDatabase(kind);
    store = await database.open();
    const admin = { id: randomUUID(), customer_id: CUSTOMER, email: 'admin@example.com', roles: ['ADMIN_ROLE'], created: T0 };
    expect(await store.customers.createWithAdmin(CUSTOMER, admin, T0)).toBe('created');
  });
  afterEach(async () => database.close());

  it('counts export tasks by status, naming every status (0 when none)', async () => {
    expect(await store.exportTasks.countByStatus()).toEqual({ PENDING: 0, SUCCESSFUL: 0, FAILED: 0 });
    for (const id of ['a', 'b', 'c', 'd']) await store.exportTasks.create(task(id));
    // Claims take the oldest first: a, then b.
    expect((await store.exportTasks.claim('me', T0, 60_000))?.id).toBe('a');
    expect(await store.exportTasks.succeed('a', 'me', T0 + 1, 7, 'exports/a.csv')).toBe(true);
    expect((await store.exportTasks.claim('me', T0, 60_000))?.id).toBe('b');
    expect(await store.exportTasks.fail('b', 'me', T0 + 2, 'disk full')).toBe(true);
    // A claimed task is still PENDING until its outcome.
    expect((await store.exportTasks.claim('me', T0, 60_000))?.id).toBe('c');
    expect(await store.exportTasks.countByStatus()).toEqual({ PENDING: 2, SUCCESSFUL: 1, FAILED: 1 });
  });

  it('tells the size of the database on disk, which grows as rows are written', async () => {
    const before = await store.sizeBytes();
    expect(Number.isInteger(before)).toBe(true);
    expect(before).toBeGreaterThan(0);
    for (let i = 0; i < 500; i++) await store.exportTasks.create(task(`task-${i}-${'x'.repeat(100)}`));
    const after = await store.sizeBytes();
    expect(after).toBeGreaterThan(before);
    if (database.locator.kind === 'sqlite') {
      // The file and its WAL (nothing checkpoints here: no broker runs).
      const { file } = database.locator;
      expect(existsSync(`${file}-wal`)).toBe(true);
      expect(after).toBe(statSync(file).size + statSync(`${file}-wal`).size);
    }
  });
}

describe('metrics reads on SQLite', () => metricsReadsSuite('sqlite'));
describePostgres('metrics reads on PostgreSQL', () => metricsReadsSuite('postgres'));
