import type { Migration } from './migration.js';

// API keys for scripts and CI (docs/api-keys.md): the SHA-256 of the key, never
// the key. A name is unique among the customer's keys that are not revoked; revoked rows stay, so
// that a revoked key is refused as revoked. created_by names no foreign key: a key whose creator
// was deleted stays listed (to be revoked) and is refused at authentication.
export const migration: Migration = {
  name: '0010_api_keys',
  up(db) {
    db.exec(`
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        customer_id TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        key_hash TEXT NOT NULL UNIQUE,
        permissions TEXT NOT NULL,
        created INTEGER NOT NULL,
        created_by TEXT NOT NULL,
        expires_at INTEGER,
        last_used INTEGER,
        revoked INTEGER
      ) STRICT;
      CREATE UNIQUE INDEX api_keys_live_name ON api_keys(customer_id, name) WHERE revoked IS NULL;
      CREATE INDEX api_keys_customer ON api_keys(customer_id, created, id);
    `);
  },
};
