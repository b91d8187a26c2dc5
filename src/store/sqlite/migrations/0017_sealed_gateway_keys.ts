import type { Migration } from './migration.js';

// No gateway private key in clear (docs/gateways.md "No gateway key at rest"): `key_pem` becomes
// `sealed_key`. Keys stored in clear before are dropped, not sealed (their tokens are known only as
// hashes): such a pending token gets a fresh key and certificate at redemption.
// Setting the column to NULL would leave the keys' bytes in free space of the table's pages and in
// the WAL, so the table is rebuilt and the old one dropped with secure_delete = ON, which zeroes
// its pages (an UPDATE that shrinks a row frees no page, and rows here are never deleted); after
// the commit a TRUNCATE checkpoint moves the zeroed pages into the file and empties the WAL.

const COLUMNS = 'serial, gateway_id, common_name, cert_pem, created, not_after, delivered_at, revoked, replaces';

export const migration: Migration = {
  name: '0017_sealed_gateway_keys',
  up(db) {
    db.pragma('secure_delete = ON');
    // Dropping the table deletes its rows first, and with them (ON DELETE CASCADE) the tokens:
    // both are copied aside, without the keys, and put back.
    db.exec(`
      CREATE TABLE certificates_0017 AS SELECT ${COLUMNS} FROM gateway_certificates;
      CREATE TABLE tokens_0017 AS SELECT token_hash, gateway_id, certificate_serial, created, expires_at, used_at FROM provisioning_tokens;
      DROP TABLE gateway_certificates;
      -- One row per client certificate. sealed_key is kept only until the token is redeemed or
      -- expires: after that the device holds the only copy of its private key, or nobody does.
      CREATE TABLE gateway_certificates (
        serial TEXT PRIMARY KEY,
        gateway_id TEXT NOT NULL REFERENCES gateways(id) ON DELETE CASCADE,
        common_name TEXT NOT NULL,
        cert_pem TEXT NOT NULL,
        sealed_key BLOB,
        created INTEGER NOT NULL,
        not_after INTEGER NOT NULL,
        delivered_at INTEGER,
        revoked INTEGER,
        replaces TEXT REFERENCES gateway_certificates(serial) ON DELETE CASCADE
      ) STRICT;
      CREATE INDEX gateway_certificates_gateway ON gateway_certificates(gateway_id);
      CREATE UNIQUE INDEX gateway_certificates_replaces ON gateway_certificates(replaces);
    `);
    // A certificate may come before the one it replaces; the references hold again at the commit.
    db.pragma('defer_foreign_keys = ON');
    db.exec(`
      INSERT INTO gateway_certificates (${COLUMNS}) SELECT ${COLUMNS} FROM certificates_0017;
      INSERT INTO provisioning_tokens (token_hash, gateway_id, certificate_serial, created, expires_at, used_at) SELECT * FROM tokens_0017;
      DROP TABLE certificates_0017;
      DROP TABLE tokens_0017;
    `);
    // What open.ts sets on every connection.
    db.pragma('secure_delete = FAST');
  },
  afterCommit(db) {
    db.pragma('wal_checkpoint(TRUNCATE)');
  },
};
