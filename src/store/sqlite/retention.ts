import type { RetentionDeletion, RetentionRecord } from '../ports/index.js';
import { RETENTION_COLUMNS, retentionDeletionValues, toRetentionRecord, type RetentionRow } from '../shared/rows.js';
import type { Db } from './open.js';

/** The retention table (migration 0012): each customer's period and its last finished deletion. */
export class RetentionStore {
  private readonly read;
  private readonly upsert;
  private readonly record;

  constructor(private readonly db: Db) {
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

  get(customerId: string): RetentionRecord {
    return toRetentionRecord(this.read.get(customerId));
  }

  /** Sets the period; returns the previous one (null when never set or for ever). Call in a transaction. */
  set(customerId: string, eventsDays: number | null, now: number): number | null {
    const previous = this.get(customerId).events_days;
    this.upsert.run(customerId, eventsDays, now);
    return previous;
  }

  periods(): { customerId: string; eventsDays: number }[] {
    return this.db
      .prepare('SELECT customer_id AS customerId, events_days AS eventsDays FROM retention WHERE events_days IS NOT NULL ORDER BY customer_id')
      .all() as { customerId: string; eventsDays: number }[];
  }

  recordDeletion(customerId: string, deletion: RetentionDeletion): void {
    this.record.run(...retentionDeletionValues(deletion), customerId);
  }
}
