import type { Migration } from './migration.js';

// The audit log (docs/audit.md): one row per recorded action, written in the transaction of
// the change it records. Pages walk (time, id) downwards per customer, all actions or one.
// `details` is JSON text as written.
export const migration: Migration = {
  name: '0009_audit_log',
  up(db) {
    db.exec(`
      CREATE TABLE audit_log (
        id TEXT PRIMARY KEY,
        customer_id TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        time INTEGER NOT NULL,
        action TEXT NOT NULL,
        actor_type TEXT NOT NULL,
        actor_id TEXT NOT NULL,
        actor_email TEXT,
        target_type TEXT,
        target_id TEXT,
        ip TEXT,
        details TEXT
      );
      CREATE INDEX audit_log_customer ON audit_log(customer_id, time DESC, id DESC);
      CREATE INDEX audit_log_action ON audit_log(customer_id, action, time DESC, id DESC);
    `);
  },
};
