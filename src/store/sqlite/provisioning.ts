import type { AuditEntry } from '../../domain/audit.js';
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
import type { LocalSignals } from '../shared/local-signals.js';
import { audited, insertAuditEntry } from './audit.js';
import { announceRevoked, handOut, insertCertificate } from './certificates.js';
import { insertGateways } from './gateways.js';
import type { Db } from './open.js';
import { prepared } from './statements.js';

/** A token that redeems now: unused, unexpired, and its certificate not revoked (@now). */
const REDEEMABLE = `used_at IS NULL AND expires_at > @now
  AND NOT EXISTS (SELECT 1 FROM gateway_certificates c WHERE c.serial = certificate_serial AND c.revoked IS NOT NULL)`;

/** Why a redemption rolls back, leaving the token unused. */
class RedemptionRefused extends Error {
  constructor(readonly outcome: 'gateway-gone' | 'key-missing') {
    super(outcome === 'gateway-gone' ? 'the gateway of this provisioning token was deleted' : 'the pending certificate has no sealed key');
    this.name = 'RedemptionRefused';
  }
}

/** Issued certificates and provisioning tokens (migration 0002). */
export class SqliteProvisioning implements ProvisioningRepository {
  constructor(
    private readonly db: Db,
    private readonly signals: LocalSignals,
  ) {}

  /** `record` for one gateway, as an outcome instead of an exception. */
  async prepare(customerId: string, preparation: Preparation, now: number, audit?: AuditEntry): Promise<PrepareOutcome> {
    return audited(
      this.db,
      (): PrepareOutcome => {
        try {
          this.record(customerId, preparation, now);
          return 'prepared';
        } catch (error) {
          if (error instanceof PreparationRefused) return error.reason;
          throw error;
        }
      },
      (outcome) => (outcome === 'prepared' ? audit : undefined),
    );
  }

  async pending(tokenHash: string, now: number): Promise<PendingToken | undefined> {
    const row = prepared(this.db, `SELECT gateway_id, certificate_serial FROM provisioning_tokens WHERE token_hash = @tokenHash AND ${REDEEMABLE}`).get({ tokenHash, now }) as
      | { gateway_id: string; certificate_serial: string }
      | undefined;
    return row && { gatewayId: row.gateway_id, serial: row.certificate_serial };
  }

  /**
   * Trades a token for its certificate, once: the token is marked used and the sealed key erased
   * in one transaction, so of two concurrent redemptions exactly one succeeds. A gateway deleted
   * since preparation makes the token worthless, and a missing key needs a `replacement`; both
   * roll the transaction back, leaving it unused.
   */
  async redeem(tokenHash: string, now: number, replacement: IssuedGatewayCertificate | undefined, audit?: AuditOf<Redemption>): Promise<RedeemOutcome> {
    let outcome: RedeemOutcome;
    try {
      outcome = audited(this.db, () => this.consume(tokenHash, now, replacement), (done) => (typeof done === 'object' && audit ? audit(done) : undefined));
    } catch (error) {
      if (error instanceof RedemptionRefused) return error.outcome;
      throw error;
    }
    if (typeof outcome === 'object') announceRevoked(this.signals, outcome.gateway.id, outcome.revokedSerials);
    return outcome;
  }

  /** Erases the sealed keys of certificates whose token expired unused; the certificates stay pending (the broker refuses them). */
  async purgeExpired(now: number): Promise<number> {
    return prepared(
      this.db,
      `UPDATE gateway_certificates SET sealed_key = NULL
       WHERE sealed_key IS NOT NULL
         AND serial IN (SELECT certificate_serial FROM provisioning_tokens WHERE used_at IS NULL AND expires_at <= ?)`,
    ).run(now).changes;
  }

  async preparePackage(customerId: string, fresh: NewGateway[], preparations: Preparation[], now: number, audit?: AuditEntry[]): Promise<void> {
    this.db
      .transaction(() => {
        insertGateways(this.db, customerId, fresh, now);
        for (const preparation of preparations) this.record(customerId, preparation, now);
        for (const entry of audit ?? []) insertAuditEntry(this.db, entry);
      })
      .immediate();
  }

  /**
   * Marks the gateway prepared and stores its certificate and token; throws PreparationRefused
   * (having written nothing) when the gateway is unknown, deleted or already prepared. Call inside a transaction.
   */
  private record(customerId: string, preparation: Preparation, now: number): void {
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

  /** The redemption inside its transaction; throws RedemptionRefused (rolling it back) for a deleted gateway or a missing key. */
  private consume(tokenHash: string, now: number, replacement: IssuedGatewayCertificate | undefined): RedeemOutcome {
    const token = prepared(
      this.db,
      `UPDATE provisioning_tokens SET used_at = @now WHERE token_hash = @tokenHash AND ${REDEEMABLE}
       RETURNING gateway_id, certificate_serial`,
    ).get({ tokenHash, now }) as { gateway_id: string; certificate_serial: string } | undefined;
    if (!token) return 'invalid';
    const gateway = prepared(this.db, 'SELECT * FROM gateways WHERE id = ? AND deleted IS NULL').get(token.gateway_id) as GatewayRecord | undefined;
    if (!gateway) throw new RedemptionRefused('gateway-gone');
    // Read before handOut erases the key.
    const row = prepared(this.db, 'SELECT serial, common_name, cert_pem, sealed_key, not_after FROM gateway_certificates WHERE serial = ?').get(
      token.certificate_serial,
    ) as { serial: string; common_name: string; cert_pem: string; sealed_key: Buffer | null; not_after: number };
    if (!replacement && row.sealed_key === null) throw new RedemptionRefused('key-missing');
    const revokedSerials = handOut(this.db, token.gateway_id, token.certificate_serial, replacement, now);
    const certificate = replacement ?? { serial: row.serial, commonName: row.common_name, certPem: row.cert_pem, sealedKey: row.sealed_key, notAfter: row.not_after };
    return { gateway, certificate, revokedSerials };
  }
}
