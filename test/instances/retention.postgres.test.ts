import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/domain/retention.js';
import { eventRow } from '../helpers/events.js';
import { countRows } from '../helpers/store-rows.js';
import { CUSTOMER, collectedLogs, startTestServer, type TestServer } from '../helpers/server.js';
import { requirePostgresProject } from '../helpers/test-store.js';

// Two instances of the service on one PostgreSQL database (docs/postgresql.md "Deleting old
// events"): a deletion pass runs under the advisory lock `retention`, so while one instance
// deletes, a pass of the other skips the round instead of deleting beside it. (PostgreSQL only:
// a .postgres.test.ts file, test/README.md.)

requirePostgresProject(import.meta.url);

const OLD = 3000;

let a: TestServer;
let b: TestServer;
const logsOfB = collectedLogs('info');
/** Batches each instance deleted. */
const deletedBy = { a: 0, b: 0 };
let aDeleting!: () => void;
const aIsDeleting = new Promise<void>((resolve) => (aDeleting = resolve));
let releaseA!: () => void;
const aReleased = new Promise<void>((resolve) => (releaseA = resolve));

beforeAll(async () => {
  a = await startTestServer({
    retention: {
      minPauseMs: 0,
      onBatch: async ({ deleted, batch }) => {
        deletedBy.a += deleted;
        if (batch === 1) {
          aDeleting();
          await aReleased;
        }
      },
    },
  });
  b = await startTestServer({
    locator: a.server.ctx.store.locator,
    logger: logsOfB.logger,
    retention: { minPauseMs: 0, onBatch: ({ deleted }) => void (deletedBy.b += deleted) },
  });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

describe('two instances on one database', () => {
  it('only one deletes old events at a time: the other skips the round while the first holds the lock', async () => {
    const now = Date.now();
    const store = a.server.ctx.store;
    await store.events.insert(CUSTOMER, Array.from({ length: OLD }, (_, i) => eventRow({ created: now - 31 * DAY_MS - i })));
    await store.events.insert(CUSTOMER, [eventRow({ created: now })]);
    // Set in the store, not through the API: a PUT would start a pass on the instance it reached.
    await store.retention.set(CUSTOMER, 30, now);

    const passOfA = a.server.ctx.retention.run();
    await aIsDeleting;
    expect(await b.server.ctx.retention.run()).toEqual({ ran: false });
    expect(logsOfB.lines.map((line) => line.msg)).toContain('another instance is deleting old events: this one leaves the round to it');
    releaseA();
    const pass = await passOfA;
    expect(pass.ran && pass.customers.map((c) => [c.customerId, c.deletion.deleted, c.stopped])).toEqual([[CUSTOMER, OLD, false]]);
    expect(deletedBy).toEqual({ a: OLD, b: 0 });
    expect(await countRows(a, 'events')).toBe(1);

    // The lock is free again: B's next pass runs, and finds nothing left to delete.
    const next = await b.server.ctx.retention.run();
    expect(next.ran && next.customers.map((c) => [c.customerId, c.deletion.deleted])).toEqual([[CUSTOMER, 0]]);
    expect((await b.admin.get<{ last_deletion: { deleted: number } }>(`/${CUSTOMER}/retention`)).last_deletion.deleted).toBe(0);
  });
});
