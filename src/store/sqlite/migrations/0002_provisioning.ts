import type { Migration } from './migration.js';

// Provisioning: certificates issued to gateways and the single-use tokens that hand them out.
export const migration: Migration = {
  name: '0002_provisioning',
  up(db) {
    db.exec(`
      -- One row per client certificate. key_pem is kept only until the token is redeemed: after
      -- that the device holds the only copy of its private key.
      CREATE TABLE gateway_certificates (
        serial TEXT PRIMARY KEY,
        gateway_id TEXT NOT NULL REFERENCES gateways(id) ON DELETE CASCADE,
        common_name TEXT NOT NULL,
        cert_pem TEXT NOT NULL,
        key_pem TEXT,
        created INTEGER NOT NULL,
        not_after INTEGER NOT NULL,
        delivered_at INTEGER
      ) STRICT;
      CREATE INDEX gateway_certificates_gateway ON gateway_certificates(gateway_id);

      -- Only the SHA-256 of a token is stored: a copy of the database does not provision devices.
      CREATE TABLE provisioning_tokens (
        token_hash TEXT PRIMARY KEY,
        gateway_id TEXT NOT NULL REFERENCES gateways(id) ON DELETE CASCADE,
        certificate_serial TEXT NOT NULL REFERENCES gateway_certificates(serial) ON DELETE CASCADE,
        created INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER
      ) STRICT;
      CREATE INDEX provisioning_tokens_gateway ON provisioning_tokens(gateway_id);
      CREATE INDEX provisioning_tokens_serial ON provisioning_tokens(certificate_serial);
    `);
  },
};
