import type { ExportTaskRecord, ExportTaskRepository, NewExportTask } from '../ports.js';
import type { Database } from './pool.js';

const TASK_COLUMNS = 'id, customer_id, requested_by, start_time, end_time, status, requested, completed, "rows", file, failure, cells';

/** Export tasks: one row each, from request to the deletion of their file. */
export class PgExportTasks implements ExportTaskRepository {
  constructor(private readonly db: Database) {}

  async create(task: NewExportTask): Promise<ExportTaskRecord> {
    const { rows } = await this.db.query<ExportTaskRecord>(
      `INSERT INTO export_tasks (id, customer_id, requested_by, start_time, end_time, cells, status, requested)
       VALUES ($1, $2, $3, $4, $5, $6, 'PENDING', $7) RETURNING ${TASK_COLUMNS}`,
      [task.id, task.customer_id, task.requested_by, task.start_time, task.end_time, task.cells, task.requested],
    );
    return rows[0]!;
  }

  async byId(customerId: string, id: string): Promise<ExportTaskRecord | undefined> {
    return (await this.db.query<ExportTaskRecord>(`SELECT ${TASK_COLUMNS} FROM export_tasks WHERE id = $1 AND customer_id = $2`, [id, customerId])).rows[0];
  }

  async succeed(id: string, completed: number, rows: number, file: string): Promise<void> {
    await this.db.query(`UPDATE export_tasks SET status = 'SUCCESSFUL', completed = $1, "rows" = $2, file = $3 WHERE id = $4 AND status = 'PENDING'`, [
      completed,
      rows,
      file,
      id,
    ]);
  }

  async fail(id: string, completed: number, failure: string): Promise<void> {
    await this.db.query(`UPDATE export_tasks SET status = 'FAILED', completed = $1, failure = $2 WHERE id = $3 AND status = 'PENDING'`, [completed, failure, id]);
  }

  async failAbandoned(now: number): Promise<number> {
    const result = await this.db.query(
      `UPDATE export_tasks SET status = 'FAILED', completed = $1, failure = 'the server stopped before the export finished' WHERE status = 'PENDING'`,
      [now],
    );
    return result.rowCount ?? 0;
  }

  async expiredBy(cutoff: number): Promise<{ id: string; file: string }[]> {
    return (await this.db.query<{ id: string; file: string }>('SELECT id, file FROM export_tasks WHERE file IS NOT NULL AND completed <= $1', [cutoff])).rows;
  }

  async dropFile(id: string): Promise<void> {
    await this.db.query('UPDATE export_tasks SET file = NULL WHERE id = $1', [id]);
  }

  async keptFiles(): Promise<Set<string>> {
    return new Set((await this.db.query<{ file: string }>('SELECT file FROM export_tasks WHERE file IS NOT NULL')).rows.map((row) => row.file));
  }
}
