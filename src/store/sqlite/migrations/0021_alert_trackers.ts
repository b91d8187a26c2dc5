import type { Migration } from './migration.js';

// What the alert evaluator keeps between rounds (docs/alerts.md "Jobs", "Connectivity"): per
// customer, the job tracker's cursor on the commit order of events (a JSON position, as a
// webhook's) with its open jobs and last scans, one row moved by compare-and-set on the cursor;
// per gateway, the connectivity last sent in a `gateway.connectivity` message.
export const migration: Migration = {
  name: '0021_alert_trackers',
  up(db) {
    db.exec(`
      CREATE TABLE alert_trackers (
        customer_id TEXT PRIMARY KEY REFERENCES customers(id) ON DELETE CASCADE,
        cursor TEXT NOT NULL,
        started INTEGER NOT NULL,
        open_jobs TEXT NOT NULL,
        last_scans TEXT NOT NULL
      ) STRICT;

      CREATE TABLE gateway_connectivity (
        gateway_id TEXT PRIMARY KEY,
        customer_id TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        connectivity TEXT NOT NULL,
        changed_at INTEGER NOT NULL
      ) STRICT;
    `);
  },
};
