import type { AuditEntry } from '../../domain/audit.js';
import type {
  AuditOf,
  CertificateLookup,
  GatewayCertificate,
  GatewayCertificateRepository,
  IssuedGatewayCertificate,
  Preparation,
  ReprovisionOutcome,
  RevokeOutcome,
} from '../ports/index.js';
import type { LocalSignals } from '../shared/local-signals.js';
import { audited } from './audit.js';
import type { Db } from './open.js';
import { prepared } from './statements.js';

const CERTIFICATE_COLUMNS = 'serial, gateway_id, cert_pem, created, not_after, delivered_at, revoked, replaces';

/** Stores an issued certificate of the gateway, replacing `replaces` (or the first), handed out at `deliveredAt` (or pending). */
function insertCertificateRow(db: Db, gatewayId: string, certificate: IssuedGatewayCertificate, now: number, replaces: string | null, deliveredAt: number | null): void {
  prepared(
    db,
    `INSERT INTO gateway_certificates (serial, gateway_id, common_name, cert_pem, sealed_key, created, not_after, delivered_at, replaces)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(certificate.serial, gatewayId, certificate.commonName, certificate.certPem, certificate.sealedKey, now, certificate.notAfter, deliveredAt, replaces);
}

/** Stores an issued certificate (replacing `replaces`, or the first) and the hash of the token that hands it out. Call inside a transaction. */
export function insertCertificate(db: Db, preparation: Preparation, now: number, replaces: string | null): void {
  const { certificate } = preparation;
  insertCertificateRow(db, preparation.gatewayId, certificate, now, replaces, null);
  prepared(
    db,
    `INSERT INTO provisioning_tokens (token_hash, gateway_id, certificate_serial, created, expires_at)
     VALUES (?, ?, ?, ?, ?)`,
  ).run(preparation.tokenHash, preparation.gatewayId, certificate.serial, now, preparation.expiresAt);
}

/** Revokes the gateway's certificates matching `condition` and erases their sealed keys; their serials. */
function revokeWhere(db: Db, gatewayId: string, now: number, condition: string, keep?: string): string[] {
  return db
    .prepare(`UPDATE gateway_certificates SET revoked = @now, sealed_key = NULL WHERE gateway_id = @gatewayId AND ${condition} RETURNING serial`)
    .pluck()
    .all({ now, gatewayId, ...(keep === undefined ? {} : { keep }) }) as string[];
}

/**
 * Inside the transaction that redeems the token of the pending certificate `serial`: it is handed
 * out and its sealed key erased, or a `replacement` is stored as handed out and the pending one
 * revoked. After a reprovision every other certificate of the gateway is revoked too, and the
 * gateway is registering again until its first message. Returns the serials revoked.
 */
export function handOut(db: Db, gatewayId: string, serial: string, replacement: IssuedGatewayCertificate | undefined, now: number): string[] {
  const replaces = prepared(db, 'SELECT replaces FROM gateway_certificates WHERE serial = ?').pluck().get(serial) as string | null | undefined;
  if (replacement) insertCertificateRow(db, gatewayId, replacement, now, serial, now);
  else prepared(db, 'UPDATE gateway_certificates SET sealed_key = NULL, delivered_at = ? WHERE serial = ?').run(now, serial);
  if (!replaces && !replacement) return [];
  const revoked = revokeWhere(db, gatewayId, now, 'revoked IS NULL AND serial <> @keep', replacement?.serial ?? serial);
  if (replaces) db.prepare('UPDATE gateways SET reprovisioned = NULL, last_message = NULL WHERE id = ?').run(gatewayId);
  return revoked;
}

/** Committed revocations: the broker of this process closes the connections that use them. */
export function announceRevoked(signals: LocalSignals, gatewayId: string, serials: string[]): void {
  for (const serial of serials) signals.deliver({ kind: 'certificate-revoked', gateway_id: gatewayId, serial });
}

/** What a change did besides its outcome: the serials it revoked (announced once committed). */
interface Revoking<T> {
  outcome: T;
  revoked: string[];
}

/**
 * Revocation and re-provisioning of gateway certificates (migration 0011). The current
 * certificate is the one no other replaces. What a change revoked is announced after the commit
 * (one process: LocalSignals).
 */
export class SqliteCertificates implements GatewayCertificateRepository {
  constructor(
    private readonly db: Db,
    private readonly signals: LocalSignals,
  ) {}

  async current(customerId: string, gatewayId: string): Promise<CertificateLookup> {
    return this.currentNow(customerId, gatewayId);
  }

  /** Revokes every certificate of the gateway (the current one too) and marks the gateway as without one. */
  async revoke(customerId: string, gatewayId: string, now: number, audit?: AuditOf<GatewayCertificate>): Promise<RevokeOutcome> {
    const { outcome, revoked } = audited(
      this.db,
      (): Revoking<RevokeOutcome> => {
        const current = this.currentNow(customerId, gatewayId);
        if (typeof current === 'string') return { outcome: current, revoked: [] };
        if (current.revoked !== null) return { outcome: 'already-revoked', revoked: [] };
        const revoked = revokeWhere(this.db, current.gateway_id, now, 'revoked IS NULL');
        this.db.prepare('UPDATE gateways SET certificate_revoked = ?, reprovisioned = NULL WHERE id = ?').run(now, current.gateway_id);
        return { outcome: { ...current, revoked: now }, revoked };
      },
      ({ outcome }) => (typeof outcome === 'object' && audit ? audit(outcome) : undefined),
    );
    if (typeof outcome === 'object') announceRevoked(this.signals, outcome.gateway_id, revoked);
    return outcome;
  }

  /** A new certificate replacing the current one; certificates never handed out are revoked at once. */
  async reprovision(customerId: string, preparation: Preparation, now: number, audit?: AuditEntry): Promise<ReprovisionOutcome> {
    const { outcome, revoked } = audited(
      this.db,
      (): Revoking<ReprovisionOutcome> => {
        const current = this.currentNow(customerId, preparation.gatewayId);
        if (typeof current === 'string') return { outcome: current, revoked: [] };
        const revoked = revokeWhere(this.db, current.gateway_id, now, 'revoked IS NULL AND delivered_at IS NULL');
        insertCertificate(this.db, preparation, now, current.serial);
        this.db.prepare('UPDATE gateways SET reprovisioned = ?, certificate_revoked = NULL WHERE id = ?').run(now, current.gateway_id);
        return { outcome: 'reprovisioned', revoked };
      },
      ({ outcome }) => (outcome === 'reprovisioned' ? audit : undefined),
    );
    announceRevoked(this.signals, preparation.gatewayId.toLowerCase(), revoked);
    return outcome;
  }

  private currentNow(customerId: string, gatewayId: string): CertificateLookup {
    const live = this.db.prepare('SELECT 1 FROM gateways WHERE id = ? AND customer_id = ? AND deleted IS NULL').get(gatewayId.toLowerCase(), customerId);
    if (!live) return 'missing';
    const current = this.db
      .prepare(
        `SELECT ${CERTIFICATE_COLUMNS} FROM gateway_certificates c
         WHERE gateway_id = ? AND NOT EXISTS (SELECT 1 FROM gateway_certificates n WHERE n.replaces = c.serial)`,
      )
      .get(gatewayId.toLowerCase()) as GatewayCertificate | undefined;
    return current ?? 'unprepared';
  }
}
