import type { AuditEntry } from '../../domain/audit.js';
import type { ClaimedExportTask, ExportStatus, ExportTaskRecord, ExportTaskRepository, NewExportTask } from '../ports/index.js';
import { audited } from './audit.js';
import type { Db } from './open.js';

/** The columns of an ExportTaskRecord (the lease columns are the repository's own). */
const TASK_COLUMNS = 'id, customer_id, requested_by, start_time, end_time, status, requested, completed, rows, file, failure, cells';

/**
 * Export tasks: one row each, from request to the deletion of their file. Claimed with a lease
 * (ports/export-tasks.ts); a claim is one UPDATE ... RETURNING, atomic as every SQLite write.
 */
export class SqliteExportTasks implements ExportTaskRepository {
  constructor(private readonly db: Db) {}

  /** The new task, or undefined when the customer has `maxPending` PENDING tasks already (one statement: SQLite writes one at a time). */
  async create(task: NewExportTask, audit?: AuditEntry, maxPending = Number.MAX_SAFE_INTEGER): Promise<ExportTaskRecord | undefined> {
    const insert = () =>
      this.db
        .prepare(
          `INSERT INTO export_tasks (id, customer_id, requested_by, start_time, end_time, cells, status, requested)
           SELECT @id, @customer_id, @requested_by, @start_time, @end_time, @cells, 'PENDING', @requested
           WHERE (SELECT count(*) FROM export_tasks WHERE customer_id = @customer_id AND status = 'PENDING') < @maxPending
           RETURNING ${TASK_COLUMNS}`,
        )
        .get({ ...task, maxPending }) as ExportTaskRecord | undefined;
    return audited(this.db, insert, (created) => (created ? audit : undefined));
  }

  /** The task if it belongs to the customer. */
  async byId(customerId: string, id: string): Promise<ExportTaskRecord | undefined> {
    return this.db.prepare(`SELECT ${TASK_COLUMNS} FROM export_tasks WHERE id = ? AND customer_id = ?`).get(id, customerId) as
      | ExportTaskRecord
      | undefined;
  }

  /** The oldest free PENDING task, its lease now the owner's; undefined when none is free. */
  async claim(owner: string, now: number, leaseMs: number): Promise<ClaimedExportTask | undefined> {
    return this.db
      .prepare(
        `UPDATE export_tasks SET lease_owner = ?, lease_until = ?, attempts = attempts + 1
         WHERE id = (SELECT id FROM export_tasks WHERE status = 'PENDING' AND (lease_until IS NULL OR lease_until < ?) ORDER BY requested, id LIMIT 1)
         RETURNING ${TASK_COLUMNS}, attempts`,
      )
      .get(owner, now + leaseMs, now) as ClaimedExportTask | undefined;
  }

  async renew(id: string, owner: string, until: number): Promise<boolean> {
    return (
      this.db.prepare(`UPDATE export_tasks SET lease_until = ? WHERE id = ? AND lease_owner = ? AND status = 'PENDING'`).run(until, id, owner).changes === 1
    );
  }

  async release(id: string, owner: string): Promise<boolean> {
    return (
      this.db
        .prepare(`UPDATE export_tasks SET lease_owner = NULL, lease_until = NULL, attempts = attempts - 1 WHERE id = ? AND lease_owner = ? AND status = 'PENDING'`)
        .run(id, owner).changes === 1
    );
  }

  /** Every lease of a PENDING task: only one process uses a SQLite data directory, so at its start none is alive. */
  async releaseOrphaned(): Promise<number> {
    return this.db.prepare(`UPDATE export_tasks SET lease_owner = NULL, lease_until = NULL WHERE status = 'PENDING' AND lease_owner IS NOT NULL`).run()
      .changes;
  }

  async succeed(id: string, owner: string, completed: number, rows: number, file: string): Promise<boolean> {
    return (
      this.db
        .prepare(`UPDATE export_tasks SET status = 'SUCCESSFUL', completed = ?, rows = ?, file = ?, lease_until = NULL WHERE id = ? AND lease_owner = ? AND status = 'PENDING'`)
        .run(completed, rows, file, id, owner).changes === 1
    );
  }

  async fail(id: string, owner: string, completed: number, failure: string): Promise<boolean> {
    return (
      this.db
        .prepare(`UPDATE export_tasks SET status = 'FAILED', completed = ?, failure = ?, lease_until = NULL WHERE id = ? AND lease_owner = ? AND status = 'PENDING'`)
        .run(completed, failure, id, owner).changes === 1
    );
  }

  /** Completed tasks (SUCCESSFUL or FAILED) completed at or before `cutoff`, with their file while kept. */
  async expiredBy(cutoff: number): Promise<{ id: string; file: string | null }[]> {
    return this.db
      .prepare("SELECT id, file FROM export_tasks WHERE status <> 'PENDING' AND completed <= ? ORDER BY completed, id")
      .all(cutoff) as { id: string; file: string | null }[];
  }

  /** Deletes a completed task, once its file is deleted. */
  async delete(id: string): Promise<void> {
    this.db.prepare("DELETE FROM export_tasks WHERE id = ? AND status <> 'PENDING'").run(id);
  }

  /** Files of the tasks still kept, for telling them from stray files. */
  async keptFiles(): Promise<Set<string>> {
    return new Set(this.db.prepare('SELECT file FROM export_tasks WHERE file IS NOT NULL').pluck().all() as string[]);
  }

  /** Tasks per status; every status is named (0 when none). */
  async countByStatus(): Promise<Record<ExportStatus, number>> {
    const counts: Record<ExportStatus, number> = { PENDING: 0, SUCCESSFUL: 0, FAILED: 0 };
    const rows = this.db.prepare('SELECT status, count(*) AS n FROM export_tasks GROUP BY status').all() as { status: ExportStatus; n: number }[];
    for (const row of rows) counts[row.status] = row.n;
    return counts;
  }
}
