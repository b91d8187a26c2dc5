import type { Migration } from './migration.js';

// The schema of SQLite's migrations 0001-0006 in one step, plus the encrypted secrets.
// Times are bigint milliseconds since the epoch. Text that is compared or ordered (ids, names,
// codes) is COLLATE "C": byte order, as SQLite's BINARY, whatever the database's locale.
// JSON-valued columns are text, stored as written (key order kept).
const T = 'text COLLATE "C"';

/** The longest scan code (in bytes) that the covering index of job analysis holds. */
export const SHORT_CODE_BYTES = 2000;

/** Customers, their users and invitations, feature flags. */
const ACCOUNTS = `
      CREATE TABLE customers (
        id ${T} PRIMARY KEY,
        created bigint NOT NULL
      );

      -- E-mails are unique case-insensitively as SQLite's NOCASE: lower() in the C collation folds ASCII only.
      CREATE TABLE users (
        id ${T} PRIMARY KEY,
        customer_id ${T} NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        email ${T} NOT NULL,
        first_name text,
        last_name text,
        language text,
        roles text NOT NULL,
        password_hash text,
        consent_general_terms text,
        consent_privacy_policy text,
        created bigint NOT NULL,
        last_updated bigint NOT NULL
      );
      CREATE UNIQUE INDEX users_email ON users (lower(email));
      CREATE INDEX users_customer ON users (customer_id, created, id);

      CREATE TABLE invitations (
        token_hash ${T} PRIMARY KEY,
        user_id ${T} NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        created bigint NOT NULL,
        expires_at bigint NOT NULL,
        used_at bigint
      );
      CREATE INDEX invitations_user ON invitations (user_id);

      CREATE TABLE features (
        customer_id ${T} NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        feature ${T} NOT NULL,
        enabled boolean NOT NULL,
        additional_properties text,
        last_updated bigint NOT NULL,
        PRIMARY KEY (customer_id, feature)
      );

`;

/** Gateways and their events. */
const GATEWAYS_AND_EVENTS = `      -- thing_name equals id; version feeds the ETag. A name is unique among the customer's live
      -- gateways (SQLite renames a deleted gateway instead; PostgreSQL text cannot hold its NUL).
      CREATE TABLE gateways (
        id ${T} PRIMARY KEY,
        customer_id ${T} NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        name ${T} NOT NULL,
        usecase text NOT NULL,
        station text NOT NULL,
        type text NOT NULL DEFAULT 'stationary',
        model text,
        manufacturer text,
        firmware text,
        version bigint NOT NULL DEFAULT 1,
        provisioning_prepared bigint,
        last_message bigint,
        deleted bigint,
        created bigint NOT NULL,
        last_updated bigint NOT NULL
      );
      CREATE UNIQUE INDEX gateways_live_name ON gateways (customer_id, name) WHERE deleted IS NULL;
      CREATE INDEX gateways_customer ON gateways (customer_id, created, id);

      -- Events are immutable; the gateway_* columns are copied from the gateway at ingest.
      -- The primary key makes ingest idempotent (ON CONFLICT (id) DO NOTHING).
      CREATE TABLE events (
        id ${T} PRIMARY KEY,
        customer_id ${T} NOT NULL,
        class text NOT NULL,
        type ${T} NOT NULL,
        created bigint NOT NULL,
        scan_code ${T},
        scan_duration double precision,
        scan_decode_symbology text,
        device_id text,
        device_battery double precision,
        device_firmware text,
        device_temperature double precision,
        gateway_id ${T},
        gateway_usecase text,
        gateway_station text,
        metrics_worker_steps double precision
      );
      -- The list and the export: keyset over (created, id) per customer.
      CREATE INDEX events_customer_created ON events (customer_id, created DESC, id DESC);
      -- The gateway filter.
      CREATE INDEX events_gateway_created ON events (gateway_id, created, id);
      -- Job analysis reads scans only, from the index alone (scan_code included). A B-tree entry
      -- holds at most about 2.7 KB and a scan code may be 8192 characters: the rare longer codes
      -- go to an index of their own (read with the table rows), so that every code can be stored.
      CREATE INDEX events_gateway_scans ON events (gateway_id, created, id) INCLUDE (scan_code)
        WHERE type = 'scan' AND octet_length(scan_code) <= ${SHORT_CODE_BYTES};
      CREATE INDEX events_gateway_long_scans ON events (gateway_id, created, id)
        WHERE type = 'scan' AND octet_length(scan_code) > ${SHORT_CODE_BYTES};

`;

/** Gateway certificates and the provisioning tokens that hand them out. */
const CERTIFICATES = `      -- One row per client certificate; key_pem only until the token is redeemed.
      CREATE TABLE gateway_certificates (
        serial ${T} PRIMARY KEY,
        gateway_id ${T} NOT NULL REFERENCES gateways(id) ON DELETE CASCADE,
        common_name text NOT NULL,
        cert_pem text NOT NULL,
        key_pem text,
        created bigint NOT NULL,
        not_after bigint NOT NULL,
        delivered_at bigint
      );
      CREATE INDEX gateway_certificates_gateway ON gateway_certificates (gateway_id);

      -- Only the SHA-256 of a token is stored.
      CREATE TABLE provisioning_tokens (
        token_hash ${T} PRIMARY KEY,
        gateway_id ${T} NOT NULL REFERENCES gateways(id) ON DELETE CASCADE,
        certificate_serial ${T} NOT NULL REFERENCES gateway_certificates(serial) ON DELETE CASCADE,
        created bigint NOT NULL,
        expires_at bigint NOT NULL,
        used_at bigint
      );
      CREATE INDEX provisioning_tokens_gateway ON provisioning_tokens (gateway_id);
      CREATE INDEX provisioning_tokens_serial ON provisioning_tokens (certificate_serial);

`;

/** Export tasks and job configurations. */
const EXPORTS_AND_JOBS = `      -- Columns in the order of SQLite's table (cells was added last there).
      CREATE TABLE export_tasks (
        id ${T} PRIMARY KEY,
        customer_id ${T} NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        requested_by text NOT NULL,
        start_time bigint NOT NULL,
        end_time bigint NOT NULL,
        status text NOT NULL CHECK (status IN ('PENDING', 'SUCCESSFUL', 'FAILED')),
        requested bigint NOT NULL,
        completed bigint,
        "rows" bigint,
        file text,
        failure text,
        cells text NOT NULL DEFAULT 'raw' CHECK (cells IN ('safe', 'raw'))
      );
      CREATE INDEX export_tasks_customer ON export_tasks (customer_id, requested);
      CREATE INDEX export_tasks_kept ON export_tasks (completed) WHERE file IS NOT NULL;

      -- gateway_ids is a JSON array: its order is the order of the analysis results.
      CREATE TABLE job_configs (
        id ${T} PRIMARY KEY,
        customer_id ${T} NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        job_name ${T} NOT NULL,
        start_barcode text NOT NULL,
        end_barcode text NOT NULL,
        gateway_ids text NOT NULL,
        version bigint NOT NULL DEFAULT 1,
        created bigint NOT NULL,
        last_updated bigint NOT NULL,
        CONSTRAINT job_configs_name UNIQUE (customer_id, job_name)
      );
      CREATE INDEX job_configs_customer ON job_configs (customer_id, created, id);

      CREATE TABLE job_config_revisions (
        customer_id ${T} PRIMARY KEY REFERENCES customers(id) ON DELETE CASCADE,
        revision bigint NOT NULL
      );

`;

/** Assets and EULA agreements, dead letters, the deployment's secrets. */
const ASSETS_AND_SECRETS = `      -- seq orders registrations: the latest of a type is its default.
      CREATE TABLE assets (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id ${T} NOT NULL UNIQUE,
        asset_type ${T} NOT NULL,
        asset_version ${T} NOT NULL,
        file_name text NOT NULL,
        file_size bigint NOT NULL,
        file_sha256 text NOT NULL,
        eula_version text NOT NULL,
        eula_text text NOT NULL,
        eula_checksum text NOT NULL,
        registered bigint NOT NULL,
        UNIQUE (asset_type, asset_version)
      );

      -- An audit record: kept when the user is deleted, so no foreign key to users.
      CREATE TABLE asset_agreements (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        customer_id ${T} NOT NULL,
        user_id text NOT NULL,
        agreed_by text NOT NULL,
        asset_id ${T} NOT NULL REFERENCES assets(id),
        asset_type text NOT NULL,
        asset_version text NOT NULL,
        eula_version text NOT NULL,
        eula_checksum text NOT NULL,
        agreed_at bigint NOT NULL
      );
      CREATE INDEX asset_agreements_customer ON asset_agreements (customer_id, agreed_at);

      -- Quarantined messages, kept for the operator; evidence, so no foreign keys.
      CREATE TABLE dead_letters (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        gateway_id text NOT NULL,
        customer_id text,
        received bigint NOT NULL,
        quarantined bigint NOT NULL,
        reason text NOT NULL,
        payload bytea NOT NULL
      );

      -- The deployment's secrets (CA, signing keys), AES-256-GCM under the master key, the name
      -- as additional authenticated data (a row copied under another name does not decrypt).
      CREATE TABLE secrets (
        name text PRIMARY KEY,
        nonce bytea NOT NULL,
        ciphertext bytea NOT NULL,
        tag bytea NOT NULL,
        created bigint NOT NULL
      );
    `;

export const migration: Migration = {
  name: '0001_foundation',
  async up(client) {
    await client.query(ACCOUNTS + GATEWAYS_AND_EVENTS + CERTIFICATES + EXPORTS_AND_JOBS + ASSETS_AND_SECRETS);
  },
};
