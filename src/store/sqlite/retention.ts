import type { CreatedIdKey } from '../../domain/page-token.js';
import type { AuditOf, DeletedBatch, RetentionDeletion, RetentionRecord, RetentionRepository } from '../ports/index.js';
import { RETENTION_COLUMNS, retentionDeletionValues, toRetentionRecord, type RetentionRow } from '../shared/rows.js';
import { audited } from './audit.js';
import { batchDeleter, EventDeleter, type BatchDeleter } from './event-deleter.js';
import type { Db } from './open.js';

/**
 * The retention table (migration 0012): each customer's period and its last finished deletion;
 * and the deletion of old events, batch by batch (event-deleter.ts).
 */
export class SqliteRetention implements RetentionRepository {
  private readonly read;
  private readonly upsert;
  private readonly record;
  private inline: BatchDeleter | undefined;
  private deleter: EventDeleter | undefined;

  constructor(
    private readonly db: Db,
    /**
     * Delete old events on this connection, in the caller's thread: the ingest writer's store,
     * whose thread runs the batches between its commits. Otherwise they run in a thread of their own.
     */
    private readonly deleteInline = false,
  ) {
    this.read = db.prepare<[string], RetentionRow>(`SELECT ${RETENTION_COLUMNS} FROM retention WHERE customer_id = ?`);
    this.upsert = db.prepare(
      `INSERT INTO retention (customer_id, events_days, updated) VALUES (?, ?, ?)
       ON CONFLICT (customer_id) DO UPDATE SET events_days = excluded.events_days, updated = excluded.updated`,
    );
    this.record = db.prepare(
      `UPDATE retention SET deletion_started = ?, deletion_finished = ?, deletion_cutoff = ?, deletion_deleted = ?,
         deletion_batches = ?, deletion_longest_batch_ms = ? WHERE customer_id = ?`,
    );
  }

  async get(customerId: string): Promise<RetentionRecord> {
    return toRetentionRecord(this.read.get(customerId));
  }

  async set(customerId: string, eventsDays: number | null, now: number, audit?: AuditOf<number | null>): Promise<RetentionRecord> {
    audited(
      this.db,
      () => {
        const previous = toRetentionRecord(this.read.get(customerId)).events_days;
        this.upsert.run(customerId, eventsDays, now);
        return previous;
      },
      (previous) => audit?.(previous),
    );
    return toRetentionRecord(this.read.get(customerId));
  }

  async periods(): Promise<{ customerId: string; eventsDays: number }[]> {
    return this.db
      .prepare('SELECT customer_id AS customerId, events_days AS eventsDays FROM retention WHERE events_days IS NOT NULL ORDER BY customer_id')
      .all() as { customerId: string; eventsDays: number }[];
  }

  /**
   * In the writer thread, on the writer's connection; elsewhere off the caller's thread, where a
   * batch may wait for the writer's lock (event-deleter.ts).
   */
  deleteEventsBefore(customerId: string, cutoff: number, limit: number, after?: CreatedIdKey): Promise<DeletedBatch> {
    if (this.deleteInline) return this.deleteHere(customerId, cutoff, limit, after);
    return (this.deleter ??= new EventDeleter(this.db)).delete(customerId, cutoff, limit, after);
  }

  async recordDeletion(customerId: string, deletion: RetentionDeletion): Promise<void> {
    this.record.run(...retentionDeletionValues(deletion), customerId);
  }

  private async deleteHere(customerId: string, cutoff: number, limit: number, after?: CreatedIdKey): Promise<DeletedBatch> {
    return (this.inline ??= batchDeleter(this.db))(customerId, cutoff, limit, after);
  }

  /** Stops the deletion thread, when one was started. */
  async close(): Promise<void> {
    await this.deleter?.close();
  }
}
