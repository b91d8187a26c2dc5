import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestWriter } from '../../src/mqtt/ingest.js';
import { StorageFull } from '../../src/store/ports/index.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import { insertCustomer } from '../../src/store/sqlite/customers.js';
import { insertGateways } from '../../src/store/sqlite/gateways.js';
import { openDatabase } from '../../src/store/sqlite/open.js';
import { cannotMountSmallFs, mountSmallFs, type SmallFs } from '../helpers/small-fs.js';
import { webhookOfNewCustomer } from '../helpers/webhook-rows.js';

// The ingest writer on a SQLite database whose file system is full (a tmpfs the test mounts): the
// refused messages are kept, unacknowledged, in order, within the byte cap; the ones beyond are
// refused at once; all kept ones commit by themselves once space returns. test/serve/full-disk.test.ts
// does the same through `serve`, MQTT and HTTP on both stores.

const GATEWAY = '5b0c4e1b-2d3f-4a5b-8c6d-9e0f1a2b3c44';
const silent = { info: () => {}, warn: () => {}, error: () => {} };

const cannot = await cannotMountSmallFs();
if (cannot && process.env.CI === 'true') throw new Error(`CI runs the full-disk tests as root, but: ${cannot}`);
if (cannot) console.warn(`full-disk tests skipped: ${cannot}`);

/** A scan payload of exactly `bytes` bytes (padded in scan_code). */
function scanOf(id: string, bytes: number): Buffer {
  const bare = JSON.stringify({ id, type: 'scan', created: 1_700_000_000_000, scan_code: '' });
  return Buffer.from(JSON.stringify({ id, type: 'scan', created: 1_700_000_000_000, scan_code: 'x'.repeat(bytes - bare.length) }));
}

/**
 * A server store and an ingest writer on one database file of the small file system, the store's
 * delivery writes routed to the writer thread as serve routes them (mqtt/broker.ts); both closed
 * after `run`. The first write that needs a new page of the full file system is refused:
 * `refusedWrite` tries `write` until then and returns its error.
 */
async function withRoutedStore(small: SmallFs, name: string, run: (store: SqliteStore, refusedWrite: (write: () => Promise<unknown>) => Promise<unknown>) => Promise<void>): Promise<void> {
  const locator = { kind: 'sqlite' as const, file: join(small.dir, name), dataDir: small.dir };
  const store = openSqliteStore(locator, 'server');
  const writer = new IngestWriter({ locator, clock: () => 1_700_000_000_000, log: silent });
  try {
    await writer.threads.writer.reached('running');
    store.webhooks.routeWrites!((writes) => writer.deliveryWrites.webhookWrites(writes));
    store.commands.routeWrites!((writes) => writer.deliveryWrites.commandWrites(writes));
    await run(store, async (write) => {
      // Each write appends to the WAL; one that still fits in the file's last page succeeds.
      for (let i = 0; i < 200; i++) {
        const error = await write().then(() => undefined, (failed: unknown) => failed);
        if (error !== undefined) return error;
      }
      return undefined;
    });
  } finally {
    await writer.close();
    await store.close();
  }
}

(cannot ? describe.skip : describe)('IngestWriter on a full disk', () => {
  let small: SmallFs;
  beforeAll(async () => {
    small = await mountSmallFs(4);
  });
  afterAll(() => small?.unmount());

  it('keeps refused messages within the byte cap, refuses the ones beyond, and commits the kept ones once space returns', async () => {
    const file = join(small.dir, 'scanhub.db');
    const db = openDatabase(file);
    insertCustomer(db, 'acme', 1);
    insertGateways(db, 'acme', [{ id: GATEWAY, name: 'g', usecase: 'picking', station: 'S1' }], 1);
    const refusals: string[] = [];
    const writer = new IngestWriter({
      locator: { kind: 'sqlite', file, dataDir: small.dir },
      clock: () => 1_700_000_000_000,
      log: silent,
      maxQueuedBytesWriterDown: 600,
      storage: { refused: (reason) => refusals.push(reason) },
      storageFullRetry: { firstMs: 10, maxMs: 40 },
    });
    try {
      await writer.threads.writer.reached('running');
      small.fill();
      const outcomes: (string | null | 'pending')[] = ['pending', 'pending', 'pending'];
      const submit = (index: number, id: string, bytes: number) =>
        new Promise<void>((resolve) =>
          writer.submit(GATEWAY, scanOf(id, bytes), (error) => {
            outcomes[index] = error ? error.message : null;
            resolve();
          }),
        );
      const first = submit(0, '00000000-0000-4000-8000-000000000001', 300);
      // Refused for lack of space and kept: no event says so, so the counter is asked each turn.
      while (writer.stats.heldForSpace === 0) await new Promise((resolve) => setImmediate(resolve));
      expect([writer.held(), refusals[0]]).toEqual(['the disk of the database is full (SQLITE_FULL)', 'the disk of the database is full (SQLITE_FULL)']);
      const second = submit(1, '00000000-0000-4000-8000-000000000002', 300);
      await submit(2, '00000000-0000-4000-8000-000000000003', 200);
      expect(outcomes).toEqual(['pending', 'pending', 'the disk is full (the disk of the database is full (SQLITE_FULL)) and 600 bytes already wait for it']);

      small.unfill();
      await Promise.all([first, second]);
      expect(outcomes.slice(0, 2)).toEqual([null, null]);
      expect(db.prepare('SELECT id FROM events ORDER BY id').pluck().all()).toEqual(['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002']);
      expect(writer.held()).toBeUndefined();
      // A full disk is no crash: the first writer thread still runs.
      expect([writer.threads.writer.state, writer.threads.writer.starts]).toEqual(['running', 1]);
      expect(writer.stats).toMatchObject({ messages: 3, events: 2, failed: 1 });
    } finally {
      await writer.close();
      db.close();
    }
  });

  it('reports a webhook write routed to the writer thread that the full disk refused as the disk being full', async () => {
    await withRoutedStore(small, 'routed.db', async (store, refusedWrite) => {
      const { customerId, webhookId, batch } = await webhookOfNewCustomer(store);
      let at = 0;
      const delivery = () => ({ ...batch(at, (at += 10)), payload: 'x'.repeat(4000) });
      small.fill();
      const refused = await refusedWrite(() => store.webhooks.enqueue(delivery()));
      expect(refused).toBeInstanceOf(StorageFull);
      expect([(refused as Error).message, store.storage.full()]).toEqual(['the disk of the database is full (SQLITE_FULL)', 'the disk of the database is full (SQLITE_FULL)']);
      small.unfill();
      at = 1000;
      await store.webhooks.enqueue(delivery());
      expect((await store.webhooks.deliveries(customerId, webhookId, 100)).at(0)?.from).toEqual([1000]);
    });
  });

  it('reports a command delivery write routed to the writer thread that the full disk refused as the disk being full', async () => {
    await withRoutedStore(small, 'routed-commands.db', async (store, refusedWrite) => {
      const { customerId } = await webhookOfNewCustomer(store);
      await store.gateways.createAll(customerId, [{ id: GATEWAY, name: 'g', usecase: 'picking', station: 'S1' }], 0);
      const now = 1_700_000_000_000;
      await store.commands.createAll(customerId, [{ id: '00000000-0000-4000-8000-0000000000c1', gateway_id: GATEWAY, device_id: null, name: 'feedback', parameters: '{}', expires_at: now + 60_000 }], now);
      small.fill();
      // Each claim counts an attempt: a page of the table written again.
      const claim = () => store.commands.claim([{ gateway_id: GATEWAY, exclude: [], limit: 1 }], now);
      const refused = await refusedWrite(claim);
      expect(refused).toBeInstanceOf(StorageFull);
      expect([(refused as Error).message, store.storage.full()]).toEqual(['the disk of the database is full (SQLITE_FULL)', 'the disk of the database is full (SQLITE_FULL)']);
      small.unfill();
      const [claimed] = await claim();
      expect(claimed!.map((command) => command.status)).toEqual(['QUEUED']);
    });
  });
});
