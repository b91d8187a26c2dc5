import type { Migration } from './migration.js';

// Times are INTEGER milliseconds since the epoch throughout. JSON-valued columns are TEXT.
export const migration: Migration = {
  name: '0001_foundation',
  up(db) {
    db.exec(`
      CREATE TABLE customers (
        id TEXT PRIMARY KEY,
        created INTEGER NOT NULL
      ) STRICT;

      CREATE TABLE users (
        id TEXT PRIMARY KEY,
        customer_id TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        email TEXT NOT NULL COLLATE NOCASE UNIQUE,
        first_name TEXT,
        last_name TEXT,
        language TEXT,
        roles TEXT NOT NULL,
        password_hash TEXT,
        consent_general_terms TEXT,
        consent_privacy_policy TEXT,
        created INTEGER NOT NULL,
        last_updated INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX users_customer ON users(customer_id, created, id);

      CREATE TABLE invitations (
        token_hash TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        created INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER
      ) STRICT;
      CREATE INDEX invitations_user ON invitations(user_id);

      CREATE TABLE features (
        customer_id TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        feature TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        additional_properties TEXT,
        last_updated INTEGER NOT NULL,
        PRIMARY KEY (customer_id, feature)
      ) STRICT;

      -- thing_name equals id; version feeds the ETag.
      CREATE TABLE gateways (
        id TEXT PRIMARY KEY,
        customer_id TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        usecase TEXT NOT NULL,
        station TEXT NOT NULL,
        type TEXT NOT NULL DEFAULT 'stationary',
        model TEXT,
        manufacturer TEXT,
        firmware TEXT,
        version INTEGER NOT NULL DEFAULT 1,
        provisioning_prepared INTEGER,
        last_message INTEGER,
        deleted INTEGER,
        created INTEGER NOT NULL,
        last_updated INTEGER NOT NULL,
        UNIQUE (customer_id, name)
      ) STRICT;
      CREATE INDEX gateways_customer ON gateways(customer_id, created, id);

      -- seq is the rowid: inserts append, so the table stays compact under heavy ingest.
      -- Events are immutable; the gateway_* columns are copied from the gateway at ingest.
      CREATE TABLE events (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL,
        customer_id TEXT NOT NULL,
        class TEXT NOT NULL,
        type TEXT NOT NULL,
        created INTEGER NOT NULL,
        scan_code TEXT,
        scan_duration REAL,
        scan_decode_symbology TEXT,
        device_id TEXT,
        device_battery REAL,
        device_firmware TEXT,
        device_temperature REAL,
        gateway_id TEXT,
        gateway_usecase TEXT,
        gateway_station TEXT,
        metrics_worker_steps REAL
      ) STRICT;
      -- Idempotent ingest: a redelivered event id is ignored.
      CREATE UNIQUE INDEX events_id ON events(id);
      -- Listing and export: keyset over (created, id) per customer.
      CREATE INDEX events_customer_created ON events(customer_id, created, id);
      -- gateway_id filter and job analysis: (created, id) per gateway. type and scan_code make it
      -- covering for the analysis (no table row read per event), so one index serves both.
      CREATE INDEX events_gateway_created ON events(gateway_id, created, id, type, scan_code);
    `);
  },
};
