import type { ClaimedExportTask, ExportStatus, ExportTaskRecord, ExportTaskRepository, NewExportTask } from '../ports/index.js';
import type { AuditEntry } from '../../domain/audit.js';
import { audited } from './audit.js';
import type { Database } from './pool.js';

const TASK_COLUMNS = 'id, customer_id, requested_by, start_time, end_time, status, requested, completed, "rows", file, failure, cells';

/**
 * Export tasks: one row each, from request to the deletion of their file. Claimed with a lease
 * (ports/export-tasks.ts) by whichever instance finds a free one first.
 */
export class PgExportTasks implements ExportTaskRepository {
  constructor(private readonly db: Database) {}

  /**
   * The customer's row is locked first, so that concurrent requests of one customer count the
   * PENDING tasks one after another and never pass `maxPending` together.
   */
  async create(task: NewExportTask, audit?: AuditEntry, maxPending?: number): Promise<ExportTaskRecord | undefined> {
    return audited(
      this.db,
      async (client) => {
        if (maxPending !== undefined) {
          await client.query('SELECT 1 FROM customers WHERE id = $1 FOR UPDATE', [task.customer_id]);
          const { rows } = await client.query<{ pending: number }>(
            `SELECT count(*)::int AS pending FROM export_tasks WHERE customer_id = $1 AND status = 'PENDING'`,
            [task.customer_id],
          );
          if (rows[0]!.pending >= maxPending) return undefined;
        }
        const { rows } = await client.query<ExportTaskRecord>(
          `INSERT INTO export_tasks (id, customer_id, requested_by, start_time, end_time, cells, status, requested)
           VALUES ($1, $2, $3, $4, $5, $6, 'PENDING', $7) RETURNING ${TASK_COLUMNS}`,
          [task.id, task.customer_id, task.requested_by, task.start_time, task.end_time, task.cells, task.requested],
        );
        return rows[0]!;
      },
      (created) => (created ? audit : undefined),
    );
  }

  async byId(customerId: string, id: string): Promise<ExportTaskRecord | undefined> {
    return (await this.db.query<ExportTaskRecord>(`SELECT ${TASK_COLUMNS} FROM export_tasks WHERE id = $1 AND customer_id = $2`, [id, customerId])).rows[0];
  }

  /**
   * SKIP LOCKED: instances claiming together each lock a different row instead of queueing on
   * the first. Under READ COMMITTED a row another claim updated meanwhile is checked again
   * against the WHERE, so a lease just taken is never taken twice.
   */
  async claim(owner: string, now: number, leaseMs: number): Promise<ClaimedExportTask | undefined> {
    const { rows } = await this.db.query<ClaimedExportTask>(
      `UPDATE export_tasks SET lease_owner = $1, lease_until = $2, attempts = attempts + 1
       WHERE id = (SELECT id FROM export_tasks WHERE status = 'PENDING' AND (lease_until IS NULL OR lease_until < $3)
                   ORDER BY requested, id FOR UPDATE SKIP LOCKED LIMIT 1)
       RETURNING ${TASK_COLUMNS}, attempts`,
      [owner, now + leaseMs, now],
    );
    return rows[0];
  }

  async renew(id: string, owner: string, until: number): Promise<boolean> {
    const result = await this.db.query(`UPDATE export_tasks SET lease_until = $1 WHERE id = $2 AND lease_owner = $3 AND status = 'PENDING'`, [until, id, owner]);
    return result.rowCount === 1;
  }

  async release(id: string, owner: string): Promise<boolean> {
    const result = await this.db.query(
      `UPDATE export_tasks SET lease_owner = NULL, lease_until = NULL, attempts = attempts - 1 WHERE id = $1 AND lease_owner = $2 AND status = 'PENDING'`,
      [id, owner],
    );
    return result.rowCount === 1;
  }

  /** None: other instances may be running the tasks whose leases are held; leases expire by themselves. */
  async releaseOrphaned(): Promise<number> {
    return 0;
  }

  async succeed(id: string, owner: string, completed: number, rows: number, file: string): Promise<boolean> {
    const result = await this.db.query(
      `UPDATE export_tasks SET status = 'SUCCESSFUL', completed = $1, "rows" = $2, file = $3, lease_until = NULL WHERE id = $4 AND lease_owner = $5 AND status = 'PENDING'`,
      [completed, rows, file, id, owner],
    );
    return result.rowCount === 1;
  }

  async fail(id: string, owner: string, completed: number, failure: string): Promise<boolean> {
    const result = await this.db.query(
      `UPDATE export_tasks SET status = 'FAILED', completed = $1, failure = $2, lease_until = NULL WHERE id = $3 AND lease_owner = $4 AND status = 'PENDING'`,
      [completed, failure, id, owner],
    );
    return result.rowCount === 1;
  }

  async expiredBy(cutoff: number): Promise<{ id: string; file: string | null }[]> {
    return (await this.db.query<{ id: string; file: string | null }>("SELECT id, file FROM export_tasks WHERE status <> 'PENDING' AND completed <= $1 ORDER BY completed, id", [cutoff])).rows;
  }

  async delete(id: string): Promise<void> {
    await this.db.query("DELETE FROM export_tasks WHERE id = $1 AND status <> 'PENDING'", [id]);
  }

  async keptFiles(): Promise<Set<string>> {
    return new Set((await this.db.query<{ file: string }>('SELECT file FROM export_tasks WHERE file IS NOT NULL')).rows.map((row) => row.file));
  }

  async countByStatus(): Promise<Record<ExportStatus, number>> {
    const counts: Record<ExportStatus, number> = { PENDING: 0, SUCCESSFUL: 0, FAILED: 0 };
    const { rows } = await this.db.query<{ status: ExportStatus; n: string }>('SELECT status, count(*) AS n FROM export_tasks GROUP BY status');
    for (const row of rows) counts[row.status] = Number(row.n);
    return counts;
  }
}
