import type { Migration } from './migration.js';

// Job configurations, the revision counter behind the list's ETag, assets and the EULA agreements
// given to download them (docs/jobs-and-assets.md).
export const migration: Migration = {
  name: '0004_jobs_assets',
  up(db) {
    db.exec(`
      -- gateway_ids is a JSON array: its order is the order of the analysis results.
      CREATE TABLE job_configs (
        id TEXT PRIMARY KEY,
        customer_id TEXT NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        job_name TEXT NOT NULL,
        start_barcode TEXT NOT NULL,
        end_barcode TEXT NOT NULL,
        gateway_ids TEXT NOT NULL,
        version INTEGER NOT NULL DEFAULT 1,
        created INTEGER NOT NULL,
        last_updated INTEGER NOT NULL,
        UNIQUE (customer_id, job_name)
      ) STRICT;
      CREATE INDEX job_configs_customer ON job_configs(customer_id, created, id);

      -- Raised by every create, update and delete of a customer's job configurations: the list's ETag.
      CREATE TABLE job_config_revisions (
        customer_id TEXT PRIMARY KEY REFERENCES customers(id) ON DELETE CASCADE,
        revision INTEGER NOT NULL
      ) STRICT;

      -- Deployment-wide, not per customer. seq orders registrations: the latest of a type is its default.
      CREATE TABLE assets (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        asset_type TEXT NOT NULL,
        asset_version TEXT NOT NULL,
        file_name TEXT NOT NULL,
        file_size INTEGER NOT NULL,
        file_sha256 TEXT NOT NULL,
        eula_version TEXT NOT NULL,
        eula_text TEXT NOT NULL,
        eula_checksum TEXT NOT NULL,
        registered INTEGER NOT NULL,
        UNIQUE (asset_type, asset_version)
      ) STRICT;

      -- An audit record: kept when the user is deleted, so no foreign keys to users.
      CREATE TABLE asset_agreements (
        seq INTEGER PRIMARY KEY,
        customer_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        agreed_by TEXT NOT NULL,
        asset_id TEXT NOT NULL REFERENCES assets(id),
        asset_type TEXT NOT NULL,
        asset_version TEXT NOT NULL,
        eula_version TEXT NOT NULL,
        eula_checksum TEXT NOT NULL,
        agreed_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX asset_agreements_customer ON asset_agreements(customer_id, agreed_at);
    `);
  },
};
