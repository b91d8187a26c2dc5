import type { Migration } from './migration.js';

// The alert evaluator's state between rounds, as SQLite's 0021 (whose comment says why).
const T = 'text COLLATE "C"';

export const migration: Migration = {
  name: '0016_alert_trackers',
  async up(client) {
    await client.query(`
      CREATE TABLE alert_trackers (
        customer_id ${T} PRIMARY KEY REFERENCES customers(id) ON DELETE CASCADE,
        cursor text NOT NULL,
        started bigint NOT NULL,
        open_jobs text NOT NULL,
        last_scans text NOT NULL
      );

      CREATE TABLE gateway_connectivity (
        gateway_id ${T} PRIMARY KEY,
        customer_id ${T} NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        connectivity text NOT NULL,
        changed_at bigint NOT NULL
      );
    `);
  },
};
