// Retention on SQLite itself (docs/retention.md): batches run in a thread of their own, so the
// server's event loop goes on while a batch waits for the write lock, and the hold they report is
// the time they held it, not the wait; the pages that deleted events free are reused by the events
// inserted after them (the database file does not grow again).
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/domain/retention.js';
import { RetentionSweeper } from '../../src/retention/sweeper.js';
import type { SqliteStore } from '../../src/store/sqlite/store.js';
import { eventRow } from '../helpers/events.js';
import { openTempStore } from '../helpers/sqlite.js';

const T0 = 1_800_000_000_000;
const CUSTOMER = 'acme';

let temp: ReturnType<typeof openTempStore>;
let store: SqliteStore;

beforeEach(async () => {
  temp = openTempStore();
  store = temp.store;
  await store.customers.createWithAdmin(CUSTOMER, { id: 'admin', customer_id: CUSTOMER, email: 'admin@acme.example', roles: ['ADMIN_ROLE'], created: T0 }, T0);
});
afterEach(async () => temp.close());

/** Inserts `count` events of gateway-like rows (a scan code, a device) created from `from` on. */
async function insertEvents(count: number, from: number): Promise<void> {
  for (let i = 0; i < count; i += 5000) {
    const rows = Array.from({ length: Math.min(5000, count - i) }, (_, j) =>
      eventRow({ created: from + i + j, gateway_id: `gw-${j % 20}`, scan_code: `400638133393${i + j}`, device_id: `M001-${j % 400}` }),
    );
    await store.events.insert(CUSTOMER, rows);
  }
}

/** The database file's size once the WAL is copied back and truncated, and its free pages. */
function settled(): { bytes: number; freePages: number } {
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  return { bytes: statSync(store.db.name).size, freePages: store.db.pragma('freelist_count', { simple: true }) as number };
}

describe('retention on SQLite', () => {
  it('reuses the pages of deleted events for new ones: delete N, insert N again, the file does not grow', async () => {
    const N = 30_000;
    await insertEvents(N, T0 - 40 * DAY_MS);
    const full = settled();
    expect(full.freePages).toBe(0);

    await store.retention.set(CUSTOMER, 30, T0);
    const pass = await new RetentionSweeper({ store, clock: () => T0, minPauseMs: 0, maxDeletedPerSecond: Infinity }).run();
    expect(pass.ran && pass.customers[0]!.deletion.deleted).toBe(N);
    const emptied = settled();
    // SQLite does not give pages back to the file system (no auto_vacuum): they go to its freelist.
    expect(emptied.bytes).toBe(full.bytes);
    expect(emptied.freePages).toBeGreaterThan((full.bytes / 4096) * 0.5);

    await insertEvents(N, T0 - DAY_MS);
    const refilled = settled();
    // As many events again fit in the freed pages: without them the file would have doubled.
    expect(refilled.bytes).toBeLessThan(full.bytes * 1.1);
    expect(refilled.freePages).toBeLessThan(emptied.freePages * 0.2);
  });

  it('runs a batch off the server thread: while it waits for the write lock the event loop goes on, and its hold excludes the wait', async () => {
    await insertEvents(1000, T0 - 40 * DAY_MS);
    // Another writer (the ingest thread, say) holds the write lock.
    const other = new Database(store.db.name);
    other.prepare('BEGIN IMMEDIATE').run();
    let settledBatch = false;
    const batch = store.retention.deleteEventsBefore(CUSTOMER, T0 - 30 * DAY_MS, 100).finally(() => (settledBatch = true));
    // The event loop turns: timers fire while the batch waits in its thread. Real timers on purpose:
    // that they keep firing for half a second is what shows the wait is off the server thread.
    let ticks = 0;
    const waited = performance.now();
    while (performance.now() - waited < 500) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      ticks++;
    }
    expect(ticks).toBeGreaterThan(10);
    expect(settledBatch).toBe(false);
    other.prepare('COMMIT').run();
    other.close();
    const done = await batch;
    expect(done.deleted).toBe(100);
    expect(done.holdMs).toBeGreaterThan(0);
    expect(done.holdMs).toBeLessThan(500);
    expect(store.db.prepare('SELECT count(*) FROM events').pluck().get()).toBe(900);
  });
});
