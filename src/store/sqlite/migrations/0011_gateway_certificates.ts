import type { Migration } from './migration.js';

// Revocation and re-provisioning of gateway certificates (docs/gateway-certificates.md): when a
// certificate was revoked, and which certificate a re-provisioned one
// replaces (the current certificate is the one nothing replaces; the unique index keeps one chain
// per gateway). On the gateway, what connectivity_status needs without reading its certificates.
export const migration: Migration = {
  name: '0011_gateway_certificates',
  up(db) {
    db.exec(`
      ALTER TABLE gateway_certificates ADD COLUMN revoked INTEGER;
      ALTER TABLE gateway_certificates ADD COLUMN replaces TEXT REFERENCES gateway_certificates(serial) ON DELETE CASCADE;
      CREATE UNIQUE INDEX gateway_certificates_replaces ON gateway_certificates(replaces);
      ALTER TABLE gateways ADD COLUMN certificate_revoked INTEGER;
      ALTER TABLE gateways ADD COLUMN reprovisioned INTEGER;
    `);
  },
};
