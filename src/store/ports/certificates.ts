import type { AuditEntry } from '../../domain/audit.js';
import type { AuditOf } from './audit.js';
import type { Preparation } from './provisioning.js';

/** A gateway's certificate as stored, without its key (docs/gateway-certificates.md). */
export interface GatewayCertificate {
  /** Lower-case hex, as the certificate carries it. */
  serial: string;
  gateway_id: string;
  cert_pem: string;
  created: number;
  not_after: number;
  /** When the device redeemed the token that hands it out, or null (pending). */
  delivered_at: number | null;
  revoked: number | null;
  /** The serial of the certificate this one replaces (reprovision), or null for the first. */
  replaces: string | null;
}

/** The current certificate of a gateway, or why there is none: no such live gateway, or never prepared. */
export type CertificateLookup = GatewayCertificate | 'missing' | 'unprepared';

/** revoke-certificate: the current certificate, now revoked, or why nothing was revoked. */
export type RevokeOutcome = GatewayCertificate | 'missing' | 'unprepared' | 'already-revoked';

export type ReprovisionOutcome = 'reprovisioned' | 'missing' | 'unprepared';

/**
 * Revocation and re-provisioning. The current certificate of a gateway is the newest of its chain
 * (each reprovision's replaces the one before). Every revocation sends `certificate-revoked` with
 * its transaction, so whichever instance holds the connection closes it.
 */
export interface GatewayCertificateRepository {
  /** The current certificate of the customer's live gateway. */
  current(customerId: string, gatewayId: string): Promise<CertificateLookup>;
  /** Revokes every certificate of the gateway not yet revoked (`audit` of the current one); 'already-revoked' when the current one was. */
  revoke(customerId: string, gatewayId: string, now: number, audit?: AuditOf<GatewayCertificate>): Promise<RevokeOutcome>;
  /**
   * Stores a certificate replacing the current one, with its token: the current one works until
   * the token is redeemed (then it is revoked); certificates never handed out are revoked at once.
   */
  reprovision(customerId: string, preparation: Preparation, now: number, audit?: AuditEntry): Promise<ReprovisionOutcome>;
}
