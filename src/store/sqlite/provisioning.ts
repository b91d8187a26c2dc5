import { CertificateStore, insertCertificate } from './certificates.js';
import type { Db } from './open.js';
import { prepared } from './statements.js';
import { PreparationRefused, type GatewayRecord, type Preparation, type PrepareOutcome, type RedeemOutcome } from '../ports.js';

/** Issued certificates and provisioning tokens (migration 0002). */
export class ProvisioningStore {
  private readonly certificates: CertificateStore;

  constructor(private readonly db: Db) {
    this.certificates = new CertificateStore(db);
  }

  /**
   * Marks the gateway prepared and stores its certificate and token; throws PreparationRefused
   * when the gateway is unknown, deleted or already prepared. Call inside a transaction.
   */
  record(customerId: string, preparation: Preparation, now: number): void {
    const marked = prepared(
      this.db,
      `UPDATE gateways SET provisioning_prepared = @now
       WHERE id = @id AND customer_id = @customerId AND deleted IS NULL AND provisioning_prepared IS NULL`,
    ).run({ id: preparation.gatewayId, customerId, now });
    if (marked.changes === 0) {
      const exists = prepared(this.db, 'SELECT 1 FROM gateways WHERE id = ? AND customer_id = ? AND deleted IS NULL').get(preparation.gatewayId, customerId);
      throw new PreparationRefused(preparation.gatewayId, exists ? 'already-prepared' : 'missing');
    }
    insertCertificate(this.db, preparation, now, null);
  }

  /** `record` for one gateway in its own transaction, as an outcome instead of an exception. */
  prepare(customerId: string, preparation: Preparation, now: number): PrepareOutcome {
    try {
      this.db.transaction(() => this.record(customerId, preparation, now)).immediate();
      return 'prepared';
    } catch (error) {
      if (error instanceof PreparationRefused) return error.reason;
      throw error;
    }
  }

  /**
   * Trades a token for the certificate and key, once: the token is marked used and the stored key
   * cleared in one transaction, so of two concurrent redemptions exactly one succeeds. A gateway
   * deleted since preparation makes the token worthless (and leaves it unused).
   */
  redeem(tokenHash: string, now: number): RedeemOutcome {
    try {
      return this.consume(tokenHash, now);
    } catch (error) {
      if (error instanceof RedemptionRefused) return 'gateway-gone';
      throw error;
    }
  }

  /** `redeem`, throwing RedemptionRefused (which rolls the transaction back) for a deleted gateway. */
  private consume(tokenHash: string, now: number): RedeemOutcome {
    return this.db
      .transaction((): RedeemOutcome => {
        const token = prepared(
          this.db,
          `UPDATE provisioning_tokens SET used_at = @now
           WHERE token_hash = @tokenHash AND used_at IS NULL AND expires_at > @now
             AND NOT EXISTS (SELECT 1 FROM gateway_certificates c WHERE c.serial = certificate_serial AND c.revoked IS NOT NULL)
           RETURNING gateway_id, certificate_serial`,
        ).get({ tokenHash, now }) as { gateway_id: string; certificate_serial: string } | undefined;
        if (!token) return 'invalid';
        const revokedSerials = this.certificates.redeemed(token.gateway_id, token.certificate_serial, now);
        const gateway = prepared(this.db, 'SELECT * FROM gateways WHERE id = ? AND deleted IS NULL').get(token.gateway_id) as GatewayRecord | undefined;
        // RETURNING yields the updated row, so the key is read before it is cleared.
        const row = prepared(
          this.db,
          'SELECT serial, common_name, cert_pem, key_pem, not_after FROM gateway_certificates WHERE serial = ? AND key_pem IS NOT NULL',
        ).get(token.certificate_serial) as
          | { serial: string; common_name: string; cert_pem: string; key_pem: string; not_after: number }
          | undefined;
        prepared(this.db, 'UPDATE gateway_certificates SET key_pem = NULL, delivered_at = ? WHERE serial = ?').run(now, token.certificate_serial);
        if (!gateway || !row) throw new RedemptionRefused();
        return {
          gateway,
          certificate: { serial: row.serial, commonName: row.common_name, certPem: row.cert_pem, keyPem: row.key_pem, notAfter: row.not_after },
          revokedSerials,
        };
      })
      .immediate();
  }

  /** The certificate with this serial (hex, lower case), without its key. */
  certificate(serial: string): { serial: string; gateway_id: string; common_name: string; cert_pem: string; not_after: number } | undefined {
    return prepared(this.db, 'SELECT serial, gateway_id, common_name, cert_pem, not_after FROM gateway_certificates WHERE serial = ?').get(
      serial.toLowerCase(),
    ) as ReturnType<ProvisioningStore['certificate']>;
  }
}

class RedemptionRefused extends Error {
  constructor() {
    super('the gateway of this provisioning token was deleted');
    this.name = 'RedemptionRefused';
  }
}
