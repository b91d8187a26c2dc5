import type { Migration } from './migration.js';

// Export tasks are claimed with a lease (docs/postgresql.md "Background work on several
// instances"): the holder and the wall-clock millisecond its lease ends, and how many times the
// task was claimed. Tasks left PENDING by an earlier version have no lease: they are claimed and
// run at start-up.
export const migration: Migration = {
  name: '0007_export_leases',
  up(db) {
    db.exec(`
      ALTER TABLE export_tasks ADD COLUMN lease_owner TEXT;
      ALTER TABLE export_tasks ADD COLUMN lease_until INTEGER;
      ALTER TABLE export_tasks ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX export_tasks_pending ON export_tasks(requested, id) WHERE status = 'PENDING';
    `);
  },
};
