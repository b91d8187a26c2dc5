import type { Db } from './open.js';
import type { ClaimedExportTask, ExportStatus, ExportTaskRecord, NewExportTask } from '../ports/index.js';

/** The columns of an ExportTaskRecord (the lease columns are the repository's own). */
const TASK_COLUMNS = 'id, customer_id, requested_by, start_time, end_time, status, requested, completed, rows, file, failure, cells';

/**
 * Export tasks: one row each, from request to the deletion of their file. Claimed with a lease
 * (ports/export-tasks.ts); a claim is one UPDATE ... RETURNING, atomic as every SQLite write.
 */
export class ExportTaskStore {
  constructor(private readonly db: Db) {}

  /** The new task, or undefined when the customer has `maxPending` PENDING tasks already (one statement: SQLite writes one at a time). */
  create(task: NewExportTask, maxPending = Number.MAX_SAFE_INTEGER): ExportTaskRecord | undefined {
    return this.db
      .prepare(
        `INSERT INTO export_tasks (id, customer_id, requested_by, start_time, end_time, cells, status, requested)
         SELECT @id, @customer_id, @requested_by, @start_time, @end_time, @cells, 'PENDING', @requested
         WHERE (SELECT count(*) FROM export_tasks WHERE customer_id = @customer_id AND status = 'PENDING') < @maxPending
         RETURNING ${TASK_COLUMNS}`,
      )
      .get({ ...task, maxPending }) as ExportTaskRecord | undefined;
  }

  /** The task if it belongs to the customer. */
  byId(customerId: string, id: string): ExportTaskRecord | undefined {
    return this.db.prepare(`SELECT ${TASK_COLUMNS} FROM export_tasks WHERE id = ? AND customer_id = ?`).get(id, customerId) as
      | ExportTaskRecord
      | undefined;
  }

  /** The oldest free PENDING task, its lease now the owner's; undefined when none is free. */
  claim(owner: string, now: number, leaseMs: number): ClaimedExportTask | undefined {
    return this.db
      .prepare(
        `UPDATE export_tasks SET lease_owner = ?, lease_until = ?, attempts = attempts + 1
         WHERE id = (SELECT id FROM export_tasks WHERE status = 'PENDING' AND (lease_until IS NULL OR lease_until < ?) ORDER BY requested, id LIMIT 1)
         RETURNING ${TASK_COLUMNS}, attempts`,
      )
      .get(owner, now + leaseMs, now) as ClaimedExportTask | undefined;
  }

  renew(id: string, owner: string, until: number): boolean {
    return (
      this.db.prepare(`UPDATE export_tasks SET lease_until = ? WHERE id = ? AND lease_owner = ? AND status = 'PENDING'`).run(until, id, owner).changes === 1
    );
  }

  release(id: string, owner: string): boolean {
    return (
      this.db
        .prepare(`UPDATE export_tasks SET lease_owner = NULL, lease_until = NULL, attempts = attempts - 1 WHERE id = ? AND lease_owner = ? AND status = 'PENDING'`)
        .run(id, owner).changes === 1
    );
  }

  /** Every lease of a PENDING task: only one process uses a SQLite data directory, so at its start none is alive. */
  releaseOrphaned(): number {
    return this.db.prepare(`UPDATE export_tasks SET lease_owner = NULL, lease_until = NULL WHERE status = 'PENDING' AND lease_owner IS NOT NULL`).run()
      .changes;
  }

  succeed(id: string, owner: string, completed: number, rows: number, file: string): boolean {
    return (
      this.db
        .prepare(`UPDATE export_tasks SET status = 'SUCCESSFUL', completed = ?, rows = ?, file = ?, lease_until = NULL WHERE id = ? AND lease_owner = ? AND status = 'PENDING'`)
        .run(completed, rows, file, id, owner).changes === 1
    );
  }

  fail(id: string, owner: string, completed: number, failure: string): boolean {
    return (
      this.db
        .prepare(`UPDATE export_tasks SET status = 'FAILED', completed = ?, failure = ?, lease_until = NULL WHERE id = ? AND lease_owner = ? AND status = 'PENDING'`)
        .run(completed, failure, id, owner).changes === 1
    );
  }

  /** Completed tasks (SUCCESSFUL or FAILED) completed at or before `cutoff`, with their file while kept. */
  expiredBy(cutoff: number): { id: string; file: string | null }[] {
    return this.db
      .prepare("SELECT id, file FROM export_tasks WHERE status <> 'PENDING' AND completed <= ? ORDER BY completed, id")
      .all(cutoff) as { id: string; file: string | null }[];
  }

  /** Deletes a completed task, once its file is deleted. */
  delete(id: string): void {
    this.db.prepare("DELETE FROM export_tasks WHERE id = ? AND status <> 'PENDING'").run(id);
  }

  /** Files of the tasks still kept, for telling them from stray files. */
  keptFiles(): Set<string> {
    return new Set(this.db.prepare('SELECT file FROM export_tasks WHERE file IS NOT NULL').pluck().all() as string[]);
  }

  /** Tasks per status; every status is named (0 when none). */
  countByStatus(): Record<ExportStatus, number> {
    const counts: Record<ExportStatus, number> = { PENDING: 0, SUCCESSFUL: 0, FAILED: 0 };
    const rows = this.db.prepare('SELECT status, count(*) AS n FROM export_tasks GROUP BY status').all() as { status: ExportStatus; n: number }[];
    for (const row of rows) counts[row.status] = row.n;
    return counts;
  }
}
