import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IngestWriter } from '../../src/mqtt/ingest.js';
import { crashThreadForTest } from '../../src/threads/supervised-thread.js';
import { insertCustomer } from '../../src/store/sqlite/customers.js';
import { insertGateways } from '../../src/store/sqlite/gateways.js';
import { openDatabase } from '../../src/store/sqlite/open.js';

const GATEWAY = '5b0c4e1b-2d3f-4a5b-8c6d-9e0f1a2b3c44';
const silent = { info: () => {}, warn: () => {}, error: () => {} };
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A scan payload of exactly `bytes` bytes (padded in scan_code). */
function scanOf(id: string, bytes: number): Buffer {
  const bare = JSON.stringify({ id, type: 'scan', created: 1_700_000_000_000, scan_code: '' });
  return Buffer.from(JSON.stringify({ id, type: 'scan', created: 1_700_000_000_000, scan_code: 'x'.repeat(bytes - bare.length) }));
}

/** The outcome a message's callback reports: null (stored) or the error's message. */
function outcome(writer: IngestWriter, payload: Buffer): Promise<string | null> {
  return new Promise((resolve) => writer.submit(GATEWAY, payload, (error) => resolve(error ? error.message : null)));
}

/** The locator of a database file (its folder as the data directory). */
const locatorOf = (file: string) => ({ kind: 'sqlite' as const, file, dataDir: dirname(file) });

/** A database with one customer and GATEWAY, and its file. */
function deployment() {
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-ingest-'));
  dirs.push(dir);
  const file = join(dir, 'scanhub.db');
  const db = openDatabase(file);
  insertCustomer(db, 'acme', 1);
  insertGateways(db, 'acme', [{ id: GATEWAY, name: 'g', usecase: 'picking', station: 'S1' }], 1);
  return { db, file };
}

describe('IngestWriter while the writer thread restarts', () => {
  it('keeps messages up to the byte cap for the new thread and refuses the ones beyond at once', async () => {
    const { db, file } = deployment();
    const writer = new IngestWriter({ locator: locatorOf(file), clock: () => 1_700_000_000_000, log: silent, maxQueuedBytesWriterDown: 600 });
    try {
      await writer.threads.writer.reached('running');
      const release = crashThreadForTest(writer.threads.writer, 'now', { holdRestart: true });
      await writer.threads.writer.reached('restarting');

      // The first waits in the backend for the new thread; the next two fill the queue to its 600 bytes.
      const ids = ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000003'];
      const first = outcome(writer, scanOf(ids[0]!, 400));
      await new Promise((resolve) => setImmediate(resolve));
      const queued = [outcome(writer, scanOf(ids[1]!, 300)), outcome(writer, scanOf(ids[2]!, 300))];
      const refused = await outcome(writer, scanOf('00000000-0000-4000-8000-000000000004', 200));
      expect(refused).toBe('the ingest writer thread is restarting and 600 bytes already wait for it');

      release();
      expect(await Promise.all([first, ...queued])).toEqual([null, null, null]);
      expect(db.prepare('SELECT id FROM events ORDER BY id').pluck().all()).toEqual(ids);
      expect(writer.stats).toMatchObject({ messages: 4, events: 3, failed: 1 });
    } finally {
      await writer.close();
      db.close();
    }
  });
});

describe('IngestWriter when the writer thread dies with a batch', () => {
  it('commits each of its messages again alone: after a commit, they are duplicates, acknowledged, none quarantined', async () => {
    const { db, file } = deployment();
    const writer = new IngestWriter({ locator: locatorOf(file), clock: () => 1_700_000_000_000, log: silent });
    try {
      await writer.threads.writer.reached('running');
      crashThreadForTest(writer.threads.writer, 'after-commit');
      // Submitted in one turn: one batch.
      const ids = ['00000000-0000-4000-8000-000000000011', '00000000-0000-4000-8000-000000000012'];
      const outcomes = Promise.all(ids.map((id) => outcome(writer, scanOf(id, 200))));
      expect(await outcomes).toEqual([null, null]);
      expect(db.prepare('SELECT id FROM events ORDER BY id').pluck().all()).toEqual(ids);
      expect(db.prepare('SELECT count(*) FROM dead_letters').pluck().get()).toBe(0);
      expect(writer.stats).toMatchObject({ messages: 2, events: 0, duplicates: 2, retriedAlone: 2, quarantined: 0, failed: 0, batches: 2 });
      expect(writer.threads.writer.starts).toBe(2);
    } finally {
      await writer.close();
      db.close();
    }
  });
});
