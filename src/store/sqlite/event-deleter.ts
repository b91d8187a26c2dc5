import { performance } from 'node:perf_hooks';
import type { Statement } from 'better-sqlite3';
import type { CreatedIdKey } from '../../domain/page-token.js';
import { DELETION_START, newestKey } from '../../domain/retention.js';
import { TaskPool } from '../../threads/task-pool.js';
import type { DeletedBatch } from '../ports/index.js';
import type { Db } from './open.js';
import { LIMIT } from './statements.js';

/**
 * One batch of old events of a customer, oldest first after a keyset position: the subquery reads
 * the rowids from the index events_customer_created (customer_id, created, id) alone, the DELETE
 * removes those rows and their entries in every index, and returns their keys.
 */
const DELETE_BATCH_SQL = `DELETE FROM events WHERE seq IN (
  SELECT seq FROM events WHERE customer_id = @customerId AND created < @cutoff AND (created, id) > (@created, @id)
  ORDER BY created, id ${LIMIT}) RETURNING created, id`;

/** A thread left without work stops after this long; the next batch starts a new one. */
const IDLE_MS = 30_000;

/** One batch as the thread is asked for it. */
export interface DeletionTask {
  customerId: string;
  cutoff: number;
  limit: number;
  after?: CreatedIdKey;
}

/** Deletes one batch on a connection: up to `limit` of the customer's events with created < cutoff after `after`, oldest first. */
export type BatchDeleter = (customerId: string, cutoff: number, limit: number, after?: CreatedIdKey) => DeletedBatch;

/** A prepared batch deletion on one connection: one IMMEDIATE transaction per call, its hold timed. */
export function batchDeleter(db: Db): BatchDeleter {
  const statement: Statement<[Record<string, unknown>], CreatedIdKey> = db.prepare(DELETE_BATCH_SQL);
  let locked = 0;
  const transaction = db.transaction((customerId: string, cutoff: number, limit: number, after: CreatedIdKey) => {
    // Runs once BEGIN IMMEDIATE holds the write lock (after any wait for another writer).
    locked = performance.now();
    return statement.all({ customerId, cutoff, limit, created: after.created, id: after.id });
  });
  return (customerId, cutoff, limit, after = DELETION_START) => {
    const keys = transaction.immediate(customerId, cutoff, limit, after);
    // COMMIT included: the lock is released when it returns.
    const holdMs = performance.now() - locked;
    const last = newestKey(keys);
    return last ? { deleted: keys.length, holdMs, last } : { deleted: 0, holdMs };
  };
}

/**
 * Runs batches of event deletion in a worker thread with its own connection (docs/retention.md):
 * better-sqlite3 is synchronous, and a batch may wait for the write lock while the ingest writer
 * commits, so on the server's thread it would stall HTTP, TLS and MQTT. The thread starts with the
 * first batch that has something to delete and stops when idle; batches run one at a time, in
 * order. An in-memory database cannot be shared with a thread: its batches run inline.
 */
export class EventDeleter {
  private readonly pool: TaskPool<DeletionTask, DeletedBatch>;
  private readonly oldestBefore;

  constructor(private readonly db: Db) {
    this.oldestBefore = db.prepare<[string, number], 1>('SELECT 1 FROM events WHERE customer_id = ? AND created < ? LIMIT 1').pluck();
    this.pool = new TaskPool({
      script: { from: import.meta.url, relative: './event-deleter-worker.js' },
      workerData: { file: db.name },
      size: 1,
      idleMs: IDLE_MS,
      failed: 'deleting old events failed',
      stopped: 'the event deletion thread stopped',
      closed: 'the event deleter is closed',
    });
  }

  /** One batch (BatchDeleter), off the caller's thread. */
  delete(customerId: string, cutoff: number, limit: number, after?: CreatedIdKey): Promise<DeletedBatch> {
    // Refused by the pool before this connection, which may be closed by now, is used.
    if (this.pool.closed) return this.pool.run({ customerId, cutoff, limit });
    // One index probe on this connection: a pass with nothing to delete starts no thread.
    if (!this.pool.running && this.oldestBefore.get(customerId, cutoff) === undefined) return Promise.resolve({ deleted: 0, holdMs: 0 });
    if (this.db.memory) return Promise.resolve(batchDeleter(this.db)(customerId, cutoff, limit, after));
    return this.pool.run({ customerId, cutoff, limit, ...(after ? { after } : {}) });
  }

  /** Stops the thread; a batch in flight is rolled back or committed whole (one transaction), and its caller told it stopped. */
  close(): Promise<void> {
    return this.pool.close();
  }
}
