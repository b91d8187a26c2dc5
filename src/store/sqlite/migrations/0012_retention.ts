import type { Migration } from './migration.js';

// Retention of events (docs/retention.md): one row per customer
// that ever set it. events_days NULL keeps events for ever (also what a customer without a row
// gets). The deletion_* columns describe the last finished deletion pass, NULL before the first.
export const migration: Migration = {
  name: '0012_retention',
  up(db) {
    db.exec(`
      CREATE TABLE retention (
        customer_id TEXT PRIMARY KEY REFERENCES customers(id) ON DELETE CASCADE,
        events_days INTEGER,
        updated INTEGER NOT NULL,
        deletion_started INTEGER,
        deletion_finished INTEGER,
        deletion_cutoff INTEGER,
        deletion_deleted INTEGER,
        deletion_batches INTEGER,
        deletion_longest_batch_ms REAL
      ) STRICT;
    `);
  },
};
