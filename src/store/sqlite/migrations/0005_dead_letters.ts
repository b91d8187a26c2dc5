import type { Migration } from './migration.js';

// Messages quarantined because the ingest writer thread died with them alone in hand
// (docs/gateways-mqtt.md "Quarantine"), kept for the operator. No foreign keys: a dead letter is
// evidence, and outlives its gateway and customer. customer_id is the gateway's at quarantine
// time (NULL when the gateway was gone by then). payload is the message's bytes as received.
export const migration: Migration = {
  name: '0005_dead_letters',
  up(db) {
    db.exec(`
      CREATE TABLE dead_letters (
        seq INTEGER PRIMARY KEY,
        gateway_id TEXT NOT NULL,
        customer_id TEXT,
        received INTEGER NOT NULL,
        quarantined INTEGER NOT NULL,
        reason TEXT NOT NULL,
        payload BLOB NOT NULL
      ) STRICT;
    `);
  },
};
