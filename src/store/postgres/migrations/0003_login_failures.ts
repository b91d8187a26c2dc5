import type { Migration } from './migration.js';

// Refused log-ins, for the per-e-mail lockout (docs/users.md "Lockout"), shared by every instance
// on the database: the lower-cased address as typed (known or not) and when. Rows older than the
// window are deleted as new ones arrive (index on `at`).
export const migration: Migration = {
  name: '0003_login_failures',
  async up(client) {
    await client.query(`
      CREATE TABLE login_failures (email_lower text NOT NULL, at bigint NOT NULL);
      CREATE INDEX login_failures_email ON login_failures (email_lower, at);
      CREATE INDEX login_failures_at ON login_failures (at);
    `);
  },
};
