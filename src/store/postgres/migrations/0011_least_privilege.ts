import type { Migration } from './migration.js';

// As SQLite's migration 0016 (whose comment says why). The addresses of login_failures are
// matched as the store compares them: lower() in the C collation, ASCII letters only.
export const migration: Migration = {
  name: '0011_least_privilege',
  async up(client) {
    await client.query(`
      ALTER TABLE users ADD COLUMN session_version integer NOT NULL DEFAULT 0;
      ALTER TABLE invitations ADD COLUMN kind text COLLATE "C" NOT NULL DEFAULT 'invitation';
      ALTER TABLE login_failures RENAME COLUMN email_lower TO lockout_key;
      UPDATE login_failures SET lockout_key = coalesce(
        (SELECT 'user:' || users.id FROM users WHERE lower(users.email) = lower(login_failures.lockout_key COLLATE "C")),
        'email:' || lockout_key);
    `);
  },
};
