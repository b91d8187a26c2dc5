import type { CreatedIdKey } from '../../domain/page-token.js';
import type { RetentionDeletion, RetentionRecord } from '../../domain/retention.js';
import type { AuditOf } from './audit.js';

export type { RetentionDeletion, RetentionRecord };

/** What one batch of a deletion did. */
export interface DeletedBatch {
  deleted: number;
  /** The keyset position of the newest event it deleted (the next batch starts after it); absent when it deleted none. */
  last?: CreatedIdKey;
  /** How long the batch held the writer: SQLite from BEGIN IMMEDIATE holding the lock to the end of COMMIT; PostgreSQL the DELETE's round trip. */
  holdMs: number;
}

/**
 * Retention of events (docs/retention.md). A deletion is a series of batches
 * (src/retention/sweeper.ts sizes and paces them), each one short transaction.
 */
export interface RetentionRepository {
  /** The customer's retention: events_days null and no deletion when never set. */
  get(customerId: string): Promise<RetentionRecord>;
  /** Sets the period (null: keep for ever), `audit` given the previous one; the record as stored. */
  set(customerId: string, eventsDays: number | null, now: number, audit?: AuditOf<number | null>): Promise<RetentionRecord>;
  /** Every customer whose events are kept for a period, with the period. */
  periods(): Promise<{ customerId: string; eventsDays: number }[]>;
  /**
   * One batch: deletes up to `limit` of the customer's events with `created < cutoff` and
   * `(created, id) > after`, oldest first (a pass hands each batch the `last` of the one before,
   * so none walks again over deleted index entries). SQLite: the ingest writer's store runs it on
   * its connection, in its thread; any other on a connection and thread of its own.
   */
  deleteEventsBefore(customerId: string, cutoff: number, limit: number, after?: CreatedIdKey): Promise<DeletedBatch>;
  /** Records the customer's last finished deletion pass. */
  recordDeletion(customerId: string, deletion: RetentionDeletion): Promise<void>;
}
