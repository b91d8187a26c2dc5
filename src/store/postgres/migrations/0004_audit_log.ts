import type { Migration } from './migration.js';

const T = 'text COLLATE "C"';

// The audit log (docs/audit.md), as SQLite's migration 0009: one row per recorded action,
// written in the transaction of the change it records. Pages walk (time, id) downwards per
// customer, all actions or one (ids in byte order, as SQLite). `details` is JSON text as written.
export const migration: Migration = {
  name: '0004_audit_log',
  async up(client) {
    await client.query(`
      CREATE TABLE audit_log (
        id ${T} PRIMARY KEY,
        customer_id ${T} NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        time bigint NOT NULL,
        action ${T} NOT NULL,
        actor_type text NOT NULL,
        actor_id text NOT NULL,
        actor_email text,
        target_type text,
        target_id text,
        ip text,
        details text
      );
      CREATE INDEX audit_log_customer ON audit_log (customer_id, time DESC, id DESC);
      CREATE INDEX audit_log_action ON audit_log (customer_id, action, time DESC, id DESC);
    `);
  },
};
