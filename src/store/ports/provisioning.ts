import type { AuditEntry } from '../../domain/audit.js';
import type { AuditOf } from './audit.js';
import type { GatewayRecord, NewGateway } from './gateways.js';

/**
 * A client certificate issued for a gateway. `sealedKey`: its private key while the device has
 * not fetched it, sealed under the provisioning token (src/pki/sealed-key.ts), which the store
 * keeps only as a hash; null for a key the device made itself, and once handed out.
 */
export interface IssuedGatewayCertificate {
  serial: string;
  commonName: string;
  certPem: string;
  sealedKey: Buffer | null;
  notAfter: number;
}

/** What prepare-provisioning stores: the certificate and the hash of the token that hands it out. */
export interface Preparation {
  gatewayId: string;
  certificate: IssuedGatewayCertificate;
  tokenHash: string;
  expiresAt: number;
}

export type PrepareOutcome = 'prepared' | 'missing' | 'already-prepared';

/** What a redeemed token yields: the gateway and the certificate handed out, with its sealed key when it was stored with one. */
export interface Redemption {
  gateway: GatewayRecord;
  certificate: IssuedGatewayCertificate;
  /** The certificates the redemption revoked: those it replaced (reprovision), and the pending one when a replacement was handed out. */
  revokedSerials: string[];
}

/**
 * `key-missing`: the pending certificate has no sealed key (stored before keys were sealed; the
 * upgrade dropped it), so only a replacement can be handed out; the token stays unused.
 */
export type RedeemOutcome = Redemption | 'invalid' | 'gateway-gone' | 'key-missing';

/** A token that would redeem now: its gateway and the certificate it hands out. */
export interface PendingToken {
  gatewayId: string;
  serial: string;
}

/** Thrown when a gateway of a package cannot be prepared, so the whole package is undone. */
export class PreparationRefused extends Error {
  constructor(
    readonly gatewayId: string,
    readonly reason: Exclude<PrepareOutcome, 'prepared'>,
  ) {
    super(`gateway ${gatewayId} cannot be prepared: ${reason}`);
    this.name = 'PreparationRefused';
  }
}

export interface ProvisioningRepository {
  /** Marks the gateway prepared and stores its certificate and token hash. */
  prepare(customerId: string, preparation: Preparation, now: number, audit?: AuditEntry): Promise<PrepareOutcome>;
  /** The gateway and pending certificate of a token that would redeem now (unused, unexpired, not revoked), without using it. */
  pending(tokenHash: string, now: number): Promise<PendingToken | undefined>;
  /**
   * Trades a token for its certificate, once: the token is used and the sealed key erased in one
   * unit of work. A `replacement` (of the device's own key, or of a fresh key for a token whose
   * key is missing) is stored, handed out and replaces the pending certificate, which is revoked.
   */
  redeem(tokenHash: string, now: number, replacement: IssuedGatewayCertificate | undefined, audit?: AuditOf<Redemption>): Promise<RedeemOutcome>;
  /** Erases the sealed keys of certificates whose token expired unused (they stay pending, which the broker refuses); how many. */
  purgeExpired(now: number): Promise<number>;
  /** A package in one unit of work: creates the `fresh` gateways, then prepares each; throws GatewayNameTaken or PreparationRefused. */
  preparePackage(customerId: string, fresh: NewGateway[], preparations: Preparation[], now: number, audit?: AuditEntry[]): Promise<void>;
}
