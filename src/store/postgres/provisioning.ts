import {
  PreparationRefused,
  type AuditOf,
  type GatewayRecord,
  type NewGateway,
  type Preparation,
  type PrepareOutcome,
  type ProvisioningRepository,
  type RedeemOutcome,
  type Redemption,
} from '../ports.js';
import type { AuditEntry } from '../../domain/audit.js';
import { insertAuditEntry } from './audit.js';
import { insertCertificate, retireReplaced } from './certificates.js';
import { GATEWAY_COLUMNS, insertGateways } from './gateways.js';
import type { Database, Queryable } from './pool.js';

/**
 * Marks the gateway prepared and stores its certificate and token, inside the caller's
 * transaction; throws PreparationRefused when the gateway is unknown, deleted or already prepared.
 */
async function record(client: Queryable, customerId: string, preparation: Preparation, now: number): Promise<void> {
  const marked = await client.query(
    `UPDATE gateways SET provisioning_prepared = $1
     WHERE id = $2 AND customer_id = $3 AND deleted IS NULL AND provisioning_prepared IS NULL`,
    [now, preparation.gatewayId, customerId],
  );
  if (marked.rowCount === 0) {
    const exists = await client.query('SELECT 1 FROM gateways WHERE id = $1 AND customer_id = $2 AND deleted IS NULL', [preparation.gatewayId, customerId]);
    throw new PreparationRefused(preparation.gatewayId, exists.rowCount ? 'already-prepared' : 'missing');
  }
  await insertCertificate(client, preparation, now, null);
}

class RedemptionRefused extends Error {
  constructor() {
    super('the gateway of this provisioning token was deleted');
    this.name = 'RedemptionRefused';
  }
}

/** Issued certificates and provisioning tokens. */
export class PgProvisioning implements ProvisioningRepository {
  constructor(private readonly db: Database) {}

  async prepare(customerId: string, preparation: Preparation, now: number, audit?: AuditEntry): Promise<PrepareOutcome> {
    try {
      await this.db.transaction(async (client) => {
        await record(client, customerId, preparation, now);
        if (audit) await insertAuditEntry(client, audit);
      });
      return 'prepared';
    } catch (error) {
      if (error instanceof PreparationRefused) return error.reason;
      throw error;
    }
  }

  /**
   * Trades a token for the certificate and key, once: `UPDATE ... WHERE used_at IS NULL RETURNING`
   * lets one of concurrent redemptions through (the others wait for its row and then find it
   * used). A gateway deleted since preparation makes the token worthless (and leaves it unused).
   */
  async redeem(tokenHash: string, now: number, audit?: AuditOf<Redemption>): Promise<RedeemOutcome> {
    try {
      return await this.db.transaction(async (client): Promise<RedeemOutcome> => {
        const token = (
          await client.query<{ gateway_id: string; certificate_serial: string }>(
            `UPDATE provisioning_tokens SET used_at = $2
             WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
               AND NOT EXISTS (SELECT 1 FROM gateway_certificates c WHERE c.serial = certificate_serial AND c.revoked IS NOT NULL)
             RETURNING gateway_id, certificate_serial`,
            [tokenHash, now],
          )
        ).rows[0];
        if (!token) return 'invalid';
        const revokedSerials = await retireReplaced(client, token.gateway_id, token.certificate_serial, now);
        const gateway = (await client.query<GatewayRecord>(`SELECT ${GATEWAY_COLUMNS} FROM gateways WHERE id = $1 AND deleted IS NULL`, [token.gateway_id])).rows[0];
        const row = (
          await client.query<{ serial: string; common_name: string; cert_pem: string; key_pem: string; not_after: number }>(
            'SELECT serial, common_name, cert_pem, key_pem, not_after FROM gateway_certificates WHERE serial = $1 AND key_pem IS NOT NULL',
            [token.certificate_serial],
          )
        ).rows[0];
        await client.query('UPDATE gateway_certificates SET key_pem = NULL, delivered_at = $1 WHERE serial = $2', [now, token.certificate_serial]);
        if (!gateway || !row) throw new RedemptionRefused();
        const redemption = {
          gateway,
          certificate: { serial: row.serial, commonName: row.common_name, certPem: row.cert_pem, keyPem: row.key_pem, notAfter: row.not_after },
          revokedSerials,
        };
        if (audit) await insertAuditEntry(client, audit(redemption));
        return redemption;
      });
    } catch (error) {
      if (error instanceof RedemptionRefused) return 'gateway-gone';
      throw error;
    }
  }

  /** Creates the fresh gateways and prepares every preparation in one transaction, or stores nothing. */
  async preparePackage(customerId: string, fresh: NewGateway[], preparations: Preparation[], now: number, audit: AuditEntry[] = []): Promise<void> {
    await this.db.transaction(async (client) => {
      await insertGateways(client, customerId, fresh, now);
      for (const preparation of preparations) await record(client, customerId, preparation, now);
      for (const entry of audit) await insertAuditEntry(client, entry);
    });
  }
}
