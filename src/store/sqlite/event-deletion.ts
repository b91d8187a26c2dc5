import { performance } from 'node:perf_hooks';
import type { Statement } from 'better-sqlite3';
import type { CreatedIdKey } from '../../domain/page-token.js';
import { DELETION_START, newestKey } from '../../domain/retention.js';
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


/** A prepared batch deletion on one connection: one IMMEDIATE transaction per call, its hold timed. */
export function batchDeleter(db: Db): (customerId: string, cutoff: number, limit: number, after?: CreatedIdKey) => DeletedBatch {
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
