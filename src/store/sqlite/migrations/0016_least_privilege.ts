import type { Migration } from './migration.js';

// Least privilege (docs/users.md):
// - users.session_version: raised by a password set and a change of roles; IdTokens issued with
//   another value are refused. Every user starts at 0, the value of tokens issued before.
// - invitations.kind: 'invitation' (a user without a password) or 'password-reset'.
// - login_failures are counted per user (lockout_key 'user:<id>') and per normalised address for
//   addresses that find no user ('email:<address>'): the refusals of the last 15 minutes are keyed
//   anew, so that no lock in progress ends with the upgrade. The column keeps its index.
export const migration: Migration = {
  name: '0016_least_privilege',
  up(db) {
    db.exec(`
      ALTER TABLE users ADD COLUMN session_version INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE invitations ADD COLUMN kind TEXT NOT NULL DEFAULT 'invitation';
      ALTER TABLE login_failures RENAME COLUMN email_lower TO lockout_key;
      UPDATE login_failures SET lockout_key = coalesce(
        (SELECT 'user:' || users.id FROM users WHERE users.email = login_failures.lockout_key),
        'email:' || lockout_key);
    `);
  },
};
