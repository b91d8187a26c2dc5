import type { CellMode } from '../../domain/csv.js';
import type { Db } from './open.js';
import type { ExportTaskRecord, NewExportTask } from '../ports.js';

/** Export tasks: one row each, from request to the deletion of their file. */
export class ExportTaskStore {
  constructor(private readonly db: Db) {}

  create(task: NewExportTask): ExportTaskRecord {
    return this.db
      .prepare(
        `INSERT INTO export_tasks (id, customer_id, requested_by, start_time, end_time, cells, status, requested)
         VALUES (@id, @customer_id, @requested_by, @start_time, @end_time, @cells, 'PENDING', @requested) RETURNING *`,
      )
      .get(task) as ExportTaskRecord;
  }

  /** The task if it belongs to the customer. */
  byId(customerId: string, id: string): ExportTaskRecord | undefined {
    return this.db.prepare('SELECT * FROM export_tasks WHERE id = ? AND customer_id = ?').get(id, customerId) as
      | ExportTaskRecord
      | undefined;
  }

  succeed(id: string, completed: number, rows: number, file: string): void {
    this.db
      .prepare(`UPDATE export_tasks SET status = 'SUCCESSFUL', completed = ?, rows = ?, file = ? WHERE id = ? AND status = 'PENDING'`)
      .run(completed, rows, file, id);
  }

  fail(id: string, completed: number, failure: string): void {
    this.db
      .prepare(`UPDATE export_tasks SET status = 'FAILED', completed = ?, failure = ? WHERE id = ? AND status = 'PENDING'`)
      .run(completed, failure, id);
  }

  /** Marks every PENDING task FAILED (their work died with the previous process); returns how many. */
  failAbandoned(now: number): number {
    return this.db
      .prepare(`UPDATE export_tasks SET status = 'FAILED', completed = ?, failure = 'the server stopped before the export finished' WHERE status = 'PENDING'`)
      .run(now).changes;
  }

  /** Tasks whose file was completed at or before `cutoff` and is still kept. */
  expiredBy(cutoff: number): { id: string; file: string }[] {
    return this.db
      .prepare('SELECT id, file FROM export_tasks WHERE file IS NOT NULL AND completed <= ?')
      .all(cutoff) as { id: string; file: string }[];
  }

  /** Forgets the file of a task once it is deleted. */
  dropFile(id: string): void {
    this.db.prepare('UPDATE export_tasks SET file = NULL WHERE id = ?').run(id);
  }

  /** Files of the tasks still kept, for telling them from stray files. */
  keptFiles(): Set<string> {
    return new Set(this.db.prepare('SELECT file FROM export_tasks WHERE file IS NOT NULL').pluck().all() as string[]);
  }
}
