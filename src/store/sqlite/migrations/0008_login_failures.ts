import type { Migration } from './migration.js';

// Refused log-ins, for the per-e-mail lockout (docs/users.md "Lockout"): the lower-cased address as
// typed (known or not) and when. Rows older than the window are deleted as new ones arrive; the
// index on `at` serves that delete.
export const migration: Migration = {
  name: '0008_login_failures',
  up(db) {
    db.exec(`
      CREATE TABLE login_failures (email_lower TEXT NOT NULL, at INTEGER NOT NULL);
      CREATE INDEX login_failures_email ON login_failures(email_lower, at);
      CREATE INDEX login_failures_at ON login_failures(at);
    `);
  },
};
