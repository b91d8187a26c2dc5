import type { Migration } from './migration.js';

// Retention of events (docs/retention.md), as SQLite's 0012_retention: one row per customer that
// ever set it; events_days NULL keeps events for ever; the deletion_* columns describe the last
// finished deletion pass.
const T = 'text COLLATE "C"';

export const migration: Migration = {
  name: '0007_retention',
  async up(client) {
    await client.query(`
      CREATE TABLE retention (
        customer_id ${T} PRIMARY KEY REFERENCES customers(id) ON DELETE CASCADE,
        events_days integer,
        updated bigint NOT NULL,
        deletion_started bigint,
        deletion_finished bigint,
        deletion_cutoff bigint,
        deletion_deleted bigint,
        deletion_batches bigint,
        deletion_longest_batch_ms double precision
      );
    `);
  },
};
