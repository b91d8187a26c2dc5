import type { Migration } from './migration.js';

// API keys for scripts and CI (docs/api-keys.md): the SHA-256 of the key, never the key. A name is
// unique among the customer's keys that are not revoked; revoked rows stay, so that a revoked key
// is refused as revoked. created_by names no foreign key: a key whose creator was deleted stays
// listed (to be revoked) and is refused at authentication. As SQLite's 0010.
const T = 'text COLLATE "C"';

export const migration: Migration = {
  name: '0005_api_keys',
  async up(client) {
    await client.query(`
      CREATE TABLE api_keys (
        id ${T} PRIMARY KEY,
        customer_id ${T} NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        name ${T} NOT NULL,
        key_hash ${T} NOT NULL UNIQUE,
        permissions text NOT NULL,
        created bigint NOT NULL,
        created_by ${T} NOT NULL,
        expires_at bigint,
        last_used bigint,
        revoked bigint
      );
      CREATE UNIQUE INDEX api_keys_live_name ON api_keys (customer_id, name) WHERE revoked IS NULL;
      CREATE INDEX api_keys_customer ON api_keys (customer_id, created, id);
    `);
  },
};
