import type Database from 'better-sqlite3';
import type { Migration } from './index.js';

// No gateway private key in clear (docs/gateways.md "No gateway key at rest"): `key_pem` becomes
// `sealed_key`, the key encrypted under a key derived from the provisioning token
// (src/pki/sealed-key.ts). Keys stored in clear before are dropped, not sealed (their tokens are
// known only as hashes): such a token, still pending, gets a fresh key and certificate at
// redemption (routes/provisioning.ts).
//
// Setting the column to NULL would leave the keys' bytes in the file (free space in pages, free
// pages, the WAL). So, with secure_delete = ON (freed pages and cells are overwritten with zeros):
// the table is rebuilt and the old one dropped, which zeroes every page it had; then, where any
// certificate was ever stored, every free page of the file is overwritten with zeros once (pages
// that older versions freed may still hold keys), which writes PRAGMA freelist_count pages
// through the WAL. After the commit a TRUNCATE checkpoint moves the zeroed pages into the file
// and empties the WAL, frames of before the upgrade included.

const COLUMNS = 'serial, gateway_id, common_name, cert_pem, created, not_after, delivered_at, revoked, replaces';
/** Zeros written per row of the scratch table: 64 MiB, far below SQLite's limit on a value. */
const ZEROS_PER_ROW = 64 * 1024 * 1024;

/** Overwrites every page on the free list with zeros: a scratch table takes them all, then gives them back. */
function zeroFreePages(db: Database.Database): void {
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const freePages = () => db.pragma('freelist_count', { simple: true }) as number;
  db.exec('CREATE TABLE zeroed_pages_0017 (zeros BLOB NOT NULL)');
  const insert = db.prepare('INSERT INTO zeroed_pages_0017 VALUES (zeroblob(?))');
  // Each overflow page holds page_size - 4 bytes; a page more than the free ones makes sure every
  // free page is taken (the file may grow by a page or two, zeroed too).
  for (let free = freePages(); free > 0; free = freePages()) insert.run(Math.min(free * pageSize + pageSize, ZEROS_PER_ROW));
  // The pages go back to the free list holding zeros: no need to zero them again.
  db.pragma('secure_delete = FAST');
  db.exec('DROP TABLE zeroed_pages_0017');
}

export const migration: Migration = {
  name: '0017_sealed_gateway_keys',
  up(db) {
    const stored = (db.prepare('SELECT count(*) FROM gateway_certificates').pluck().get() as number) > 0;
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
    if (stored) zeroFreePages(db);
    // What open.ts sets on every connection.
    db.pragma('secure_delete = FAST');
  },
  afterCommit(db) {
    db.pragma('wal_checkpoint(TRUNCATE)');
  },
};
