import { performance } from 'node:perf_hooks';
import type { CreatedIdKey } from '../../domain/page-token.js';
import { DELETION_START, newestKey } from '../../domain/retention.js';
import type { DeletedBatch, RetentionDeletion, RetentionRecord, RetentionRepository, AuditOf } from '../ports/index.js';
import { RETENTION_COLUMNS, retentionDeletionValues, toRetentionRecord, type RetentionRow } from '../shared/rows.js';
import { audited } from './audit.js';
import type { Database } from './pool.js';

/**
 * One batch of old events of a customer, oldest first after a keyset position, found and deleted
 * by the event key in events_customer_created (the id alone names no event: migration 0009). The
 * position keeps a batch from walking the entries of rows earlier batches deleted, which stay until
 * VACUUM. Rows another statement deletes meanwhile are not counted.
 */
const DELETE_BATCH_SQL = `DELETE FROM events WHERE customer_id = $1 AND (created, id) IN (
  SELECT created, id FROM events WHERE customer_id = $1 AND created < $2 AND (created, id) > ($3, $4)
  ORDER BY created, id LIMIT $5) RETURNING created, id`;


/** The retention table (migration 0007) and the deletion of old events. */
export class PgRetention implements RetentionRepository {
  constructor(private readonly db: Database) {}

  async get(customerId: string): Promise<RetentionRecord> {
    const { rows } = await this.db.query<RetentionRow>(`SELECT ${RETENTION_COLUMNS} FROM retention WHERE customer_id = $1`, [customerId]);
    return toRetentionRecord(rows[0]);
  }

  async set(customerId: string, eventsDays: number | null, now: number, audit?: AuditOf<number | null>): Promise<RetentionRecord> {
    const { rows } = await audited(
      this.db,
      // FOR UPDATE: two changes at once record each other's value as the previous one, in order.
      async (client) => {
        const previous = await client.query<{ events_days: number | null }>('SELECT events_days FROM retention WHERE customer_id = $1 FOR UPDATE', [customerId]);
        const stored = await client.query<RetentionRow>(
          `INSERT INTO retention (customer_id, events_days, updated) VALUES ($1, $2, $3)
           ON CONFLICT (customer_id) DO UPDATE SET events_days = excluded.events_days, updated = excluded.updated
           RETURNING ${RETENTION_COLUMNS}`,
          [customerId, eventsDays, now],
        );
        return { rows: stored.rows, previous: previous.rows[0]?.events_days ?? null };
      },
      ({ previous }) => audit?.(previous),
    );
    return toRetentionRecord(rows[0]);
  }

  async periods(): Promise<{ customerId: string; eventsDays: number }[]> {
    const { rows } = await this.db.query<{ customer_id: string; events_days: number }>(
      'SELECT customer_id, events_days FROM retention WHERE events_days IS NOT NULL ORDER BY customer_id',
    );
    return rows.map((row) => ({ customerId: row.customer_id, eventsDays: row.events_days }));
  }

  async deleteEventsBefore(customerId: string, cutoff: number, limit: number, after = DELETION_START): Promise<DeletedBatch> {
    const started = performance.now();
    const { rows } = await this.db.query<CreatedIdKey>(DELETE_BATCH_SQL, [customerId, cutoff, after.created, after.id, limit]);
    const holdMs = performance.now() - started;
    const last = newestKey(rows);
    return last ? { deleted: rows.length, holdMs, last } : { deleted: 0, holdMs };
  }

  async recordDeletion(customerId: string, deletion: RetentionDeletion): Promise<void> {
    await this.db.query(
      `UPDATE retention SET deletion_started = $1, deletion_finished = $2, deletion_cutoff = $3, deletion_deleted = $4,
         deletion_batches = $5, deletion_longest_batch_ms = $6 WHERE customer_id = $7`,
      [...retentionDeletionValues(deletion), customerId],
    );
  }
}
