import { CertificateStore, insertCertificate } from './certificates.js';
import type { Db } from './open.js';
import { prepared } from './statements.js';
import {
  PreparationRefused,
  type GatewayRecord,
  type IssuedGatewayCertificate,
  type PendingToken,
  type Preparation,
  type PrepareOutcome,
  type RedeemOutcome,
} from '../ports/index.js';

/** A token that redeems now: unused, unexpired, and its certificate not revoked (@now). */
const REDEEMABLE = `used_at IS NULL AND expires_at > @now
  AND NOT EXISTS (SELECT 1 FROM gateway_certificates c WHERE c.serial = certificate_serial AND c.revoked IS NOT NULL)`;

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

  /** The gateway and pending certificate of a token that would redeem now, without using it. */
  pending(tokenHash: string, now: number): PendingToken | undefined {
    const row = prepared(this.db, `SELECT gateway_id, certificate_serial FROM provisioning_tokens WHERE token_hash = @tokenHash AND ${REDEEMABLE}`).get({ tokenHash, now }) as
      | { gateway_id: string; certificate_serial: string }
      | undefined;
    return row && { gatewayId: row.gateway_id, serial: row.certificate_serial };
  }

  /**
   * Trades a token for its certificate, once: the token is marked used and the sealed key erased
   * in one transaction, so of two concurrent redemptions exactly one succeeds. A gateway deleted
   * since preparation makes the token worthless, and a missing key needs a `replacement`; both
   * leave it unused.
   */
  redeem(tokenHash: string, now: number, replacement?: IssuedGatewayCertificate): RedeemOutcome {
    try {
      return this.consume(tokenHash, now, replacement);
    } catch (error) {
      if (error instanceof RedemptionRefused) return error.outcome;
      throw error;
    }
  }

  /** `redeem`, throwing RedemptionRefused (which rolls the transaction back) for a deleted gateway or a missing key. */
  private consume(tokenHash: string, now: number, replacement: IssuedGatewayCertificate | undefined): RedeemOutcome {
    return this.db
      .transaction((): RedeemOutcome => {
        const token = prepared(
          this.db,
          `UPDATE provisioning_tokens SET used_at = @now WHERE token_hash = @tokenHash AND ${REDEEMABLE}
           RETURNING gateway_id, certificate_serial`,
        ).get({ tokenHash, now }) as { gateway_id: string; certificate_serial: string } | undefined;
        if (!token) return 'invalid';
        const gateway = prepared(this.db, 'SELECT * FROM gateways WHERE id = ? AND deleted IS NULL').get(token.gateway_id) as GatewayRecord | undefined;
        if (!gateway) throw new RedemptionRefused('gateway-gone');
        // Read before redeemed() erases the key.
        const row = prepared(this.db, 'SELECT serial, common_name, cert_pem, sealed_key, not_after FROM gateway_certificates WHERE serial = ?').get(
          token.certificate_serial,
        ) as { serial: string; common_name: string; cert_pem: string; sealed_key: Buffer | null; not_after: number };
        if (!replacement && row.sealed_key === null) throw new RedemptionRefused('key-missing');
        const revokedSerials = this.certificates.redeemed(token.gateway_id, token.certificate_serial, replacement, now);
        const certificate = replacement ?? { serial: row.serial, commonName: row.common_name, certPem: row.cert_pem, sealedKey: row.sealed_key, notAfter: row.not_after };
        return { gateway, certificate, revokedSerials };
      })
      .immediate();
  }

  /**
   * Erases the sealed keys of certificates whose token expired unused; the certificates stay
   * pending (the broker refuses them). How many keys were erased.
   */
  purgeExpired(now: number): number {
    return prepared(
      this.db,
      `UPDATE gateway_certificates SET sealed_key = NULL
       WHERE sealed_key IS NOT NULL
         AND serial IN (SELECT certificate_serial FROM provisioning_tokens WHERE used_at IS NULL AND expires_at <= ?)`,
    ).run(now).changes;
  }

  /** The certificate with this serial (hex, lower case), without its key. */
  certificate(serial: string): { serial: string; gateway_id: string; common_name: string; cert_pem: string; not_after: number } | undefined {
    return prepared(this.db, 'SELECT serial, gateway_id, common_name, cert_pem, not_after FROM gateway_certificates WHERE serial = ?').get(
      serial.toLowerCase(),
    ) as ReturnType<ProvisioningStore['certificate']>;
  }
}

/** Why a redemption rolls back, leaving the token unused. */
class RedemptionRefused extends Error {
  constructor(readonly outcome: 'gateway-gone' | 'key-missing') {
    super(outcome === 'gateway-gone' ? 'the gateway of this provisioning token was deleted' : 'the pending certificate has no sealed key');
    this.name = 'RedemptionRefused';
  }
}
