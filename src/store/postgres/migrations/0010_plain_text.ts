import type { Migration } from './migration.js';

// `plain_text`, as SQLite's migration 0015 (whose comment says why). This store writes the list's
// JSON itself and does not read it; the column keeps the event's stored form the same in both
// stores (operator migrate and backups copy it). No CHECK: PostgreSQL would scan the table to
// validate one, and adding a nullable column without a default changes only the catalog.
export const migration: Migration = {
  name: '0010_plain_text',
  async up(client) {
    await client.query('ALTER TABLE events ADD COLUMN plain_text smallint');
  },
};
