import type { Migration } from './migration.js';

// Export tasks (docs/events.md "Exports"). A task is only a row: the work itself does not survive a
// restart, so a task found PENDING at start-up is marked FAILED. `file` is the CSV under the data
// directory while it is kept (24 h after completion), NULL before and after.
export const migration: Migration = {
  name: '0003_exports',
  up(db) {
    db.exec(`
      CREATE TABLE export_tasks (
        id TEXT PRIMARY KEY,
        customer_id TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        requested_by TEXT NOT NULL,
        start_time INTEGER NOT NULL,
        end_time INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('PENDING', 'SUCCESSFUL', 'FAILED')),
        requested INTEGER NOT NULL,
        completed INTEGER,
        rows INTEGER,
        file TEXT,
        failure TEXT
      ) STRICT;
      CREATE INDEX export_tasks_customer ON export_tasks(customer_id, requested);
      CREATE INDEX export_tasks_kept ON export_tasks(completed) WHERE file IS NOT NULL;
    `);
  },
};
