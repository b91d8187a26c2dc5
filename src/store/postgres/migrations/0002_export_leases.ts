import type { Migration } from './migration.js';

// Export tasks are claimed with a lease (docs/postgresql.md "Background work on several
// instances"): the holder (an instance's id) and the wall-clock millisecond its lease ends, and how
// many times the task was claimed. The partial index serves the claim's `status = 'PENDING' ORDER
// BY requested, id`.
export const migration: Migration = {
  name: '0002_export_leases',
  async up(client) {
    await client.query(`
      ALTER TABLE export_tasks ADD COLUMN lease_owner text;
      ALTER TABLE export_tasks ADD COLUMN lease_until bigint;
      ALTER TABLE export_tasks ADD COLUMN attempts integer NOT NULL DEFAULT 0;
      CREATE INDEX export_tasks_pending ON export_tasks (requested, id) WHERE status = 'PENDING';
    `);
  },
};
