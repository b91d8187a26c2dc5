import type { Migration } from './migration.js';

// Revocation and re-provisioning of gateway certificates (docs/gateway-certificates.md), as
// SQLite's 0011_gateway_certificates: when a certificate was revoked, which one a re-provisioned
// certificate replaces (one chain per gateway), and on the gateway what connectivity_status needs.
export const migration: Migration = {
  name: '0006_gateway_certificates',
  async up(client) {
    await client.query(`
      ALTER TABLE gateway_certificates ADD COLUMN revoked bigint;
      ALTER TABLE gateway_certificates ADD COLUMN replaces text COLLATE "C" REFERENCES gateway_certificates(serial) ON DELETE CASCADE;
      CREATE UNIQUE INDEX gateway_certificates_replaces ON gateway_certificates (replaces);
      ALTER TABLE gateways ADD COLUMN certificate_revoked bigint;
      ALTER TABLE gateways ADD COLUMN reprovisioned bigint;
    `);
  },
};
