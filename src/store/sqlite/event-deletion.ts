import { performance } from 'node:perf_hooks';
import type { Statement } from 'better-sqlite3';
import type { DeletedBatch } from '../ports.js';
import type { Db } from './open.js';

/**
 * One batch of old events of a customer, oldest first: the subquery reads the rowids from the
 * index events_customer_created (customer_id, created, id) alone, the DELETE removes those rows
 * and their entries in every index.
 */
const DELETE_BATCH_SQL = `DELETE FROM events WHERE seq IN (
  SELECT seq FROM events WHERE customer_id = ? AND created < ? ORDER BY created, id LIMIT ?)`;

/** A prepared batch deletion on one connection: one IMMEDIATE transaction per call, its hold timed. */
export function batchDeleter(db: Db): (customerId: string, cutoff: number, limit: number) => DeletedBatch {
  const statement: Statement<[string, number, number]> = db.prepare(DELETE_BATCH_SQL);
  let locked = 0;
  const transaction = db.transaction((customerId: string, cutoff: number, limit: number) => {
    // Runs once BEGIN IMMEDIATE holds the write lock (after any wait for another writer).
    locked = performance.now();
    return statement.run(customerId, cutoff, limit).changes;
  });
  return (customerId, cutoff, limit) => {
    const deleted = transaction.immediate(customerId, cutoff, limit);
    // COMMIT included: the lock is released when it returns.
    return { deleted, holdMs: performance.now() - locked };
  };
}
