import type { Migration } from './migration.js';

// As SQLite's 0017_sealed_gateway_keys (whose comment says why): `key_pem` becomes `sealed_key`,
// and keys stored in clear before are dropped. DROP COLUMN alone only hides a column, and an
// UPDATE leaves the old row versions in the table's pages until they are reused: CLUSTER writes
// the table (and its TOAST table) anew, with the dropped column NULL in every row, and the old
// files are deleted at the commit. Copies that PostgreSQL's WAL or a base backup made before stay
// theirs (docs/postgresql.md).
export const migration: Migration = {
  name: '0012_sealed_gateway_keys',
  async up(client) {
    await client.query(`
      ALTER TABLE gateway_certificates ADD COLUMN sealed_key bytea;
      UPDATE gateway_certificates SET key_pem = NULL WHERE key_pem IS NOT NULL;
      ALTER TABLE gateway_certificates DROP COLUMN key_pem;
      CLUSTER gateway_certificates USING gateway_certificates_pkey;
    `);
  },
};
