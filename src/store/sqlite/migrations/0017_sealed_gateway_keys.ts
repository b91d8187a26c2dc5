import type { Migration } from './migration.js';

// No gateway private key in clear (docs/gateways.md "No gateway key at rest"): `key_pem` becomes
// `sealed_key`, the key encrypted under a key derived from the provisioning token
// (src/pki/sealed-key.ts). Keys stored in clear before are dropped, not sealed (their tokens are
// known only as hashes): such a token, still pending, gets a fresh key and certificate at
// redemption (routes/provisioning.ts).
//
// Setting the column to NULL would leave the keys' bytes in the file: in the free space of the
// table's pages (where every redemption of the old version left one) and in the WAL. So the
// table is rebuilt and the old one dropped with secure_delete = ON, which overwrites every page it
// had with zeros. No free page holds a key: rows of this table are never deleted, and an UPDATE
// that shrinks a row frees no page (SQLite rebalances only an overfull page on insert). After the
// commit a TRUNCATE checkpoint moves the zeroed pages into the file and empties the WAL, frames
// of before the upgrade included.

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
