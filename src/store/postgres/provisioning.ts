import {
  PreparationRefused,
  type AuditOf,
  type GatewayRecord,
  type IssuedGatewayCertificate,
  type NewGateway,
  type PendingToken,
  type Preparation,
  type PrepareOutcome,
  type ProvisioningRepository,
  type RedeemOutcome,
  type Redemption,
} from '../ports/index.js';
import type { AuditEntry } from '../../domain/audit.js';
import { insertAuditEntry } from './audit.js';
import { handOut, insertCertificate } from './certificates.js';
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

/** Why a redemption rolls back, leaving the token unused. */
class RedemptionRefused extends Error {
  constructor(readonly outcome: 'gateway-gone' | 'key-missing') {
    super(outcome === 'gateway-gone' ? 'the gateway of this provisioning token was deleted' : 'the pending certificate has no sealed key');
    this.name = 'RedemptionRefused';
  }
}

/** A token that redeems now ($1 its hash, $2 now): unused, unexpired, and its certificate not revoked. */
const REDEEMABLE = `token_hash = $1 AND used_at IS NULL AND expires_at > $2
  AND NOT EXISTS (SELECT 1 FROM gateway_certificates c WHERE c.serial = certificate_serial AND c.revoked IS NOT NULL)`;

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

  async pending(tokenHash: string, now: number): Promise<PendingToken | undefined> {
    const { rows } = await this.db.query<{ gateway_id: string; certificate_serial: string }>(
      `SELECT gateway_id, certificate_serial FROM provisioning_tokens WHERE ${REDEEMABLE}`,
      [tokenHash, now],
    );
    return rows[0] && { gatewayId: rows[0].gateway_id, serial: rows[0].certificate_serial };
  }

  /**
   * Trades a token for its certificate, once: `UPDATE ... WHERE used_at IS NULL RETURNING` lets
   * one of concurrent redemptions through (the others wait for its row and then find it used). A
   * gateway deleted since preparation makes the token worthless, and a missing key needs a
   * `replacement`; both leave it unused.
   */
  async redeem(tokenHash: string, now: number, replacement: IssuedGatewayCertificate | undefined, audit?: AuditOf<Redemption>): Promise<RedeemOutcome> {
    try {
      return await this.db.transaction(async (client): Promise<RedeemOutcome> => {
        const token = (
          await client.query<{ gateway_id: string; certificate_serial: string }>(
            `UPDATE provisioning_tokens SET used_at = $2 WHERE ${REDEEMABLE} RETURNING gateway_id, certificate_serial`,
            [tokenHash, now],
          )
        ).rows[0];
        if (!token) return 'invalid';
        const gateway = (await client.query<GatewayRecord>(`SELECT ${GATEWAY_COLUMNS} FROM gateways WHERE id = $1 AND deleted IS NULL`, [token.gateway_id])).rows[0];
        if (!gateway) throw new RedemptionRefused('gateway-gone');
        // Read before handOut() erases the key.
        const row = (
          await client.query<{ serial: string; common_name: string; cert_pem: string; sealed_key: Buffer | null; not_after: number }>(
            'SELECT serial, common_name, cert_pem, sealed_key, not_after FROM gateway_certificates WHERE serial = $1',
            [token.certificate_serial],
          )
        ).rows[0]!;
        if (!replacement && row.sealed_key === null) throw new RedemptionRefused('key-missing');
        const revokedSerials = await handOut(client, token.gateway_id, token.certificate_serial, replacement, now);
        const certificate = replacement ?? { serial: row.serial, commonName: row.common_name, certPem: row.cert_pem, sealedKey: row.sealed_key, notAfter: row.not_after };
        const redemption = { gateway, certificate, revokedSerials };
        if (audit) await insertAuditEntry(client, audit(redemption));
        return redemption;
      });
    } catch (error) {
      if (error instanceof RedemptionRefused) return error.outcome;
      throw error;
    }
  }

  async purgeExpired(now: number): Promise<number> {
    const { rowCount } = await this.db.query(
      `UPDATE gateway_certificates SET sealed_key = NULL
       WHERE sealed_key IS NOT NULL
         AND serial IN (SELECT certificate_serial FROM provisioning_tokens WHERE used_at IS NULL AND expires_at <= $1)`,
      [now],
    );
    return rowCount ?? 0;
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
