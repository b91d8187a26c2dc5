/** What GET .../certificate says of a gateway's current certificate (docs/gateway-certificates.md). */
export type CertificateStatus = 'pending' | 'active' | 'revoked';

export interface CertificateFacts {
  /** When the device redeemed the token that hands it out, or null. */
  delivered_at: number | null;
  revoked: number | null;
}

/** `revoked` once revoked; `pending` until the device fetched it; `active` after that. Expiry shows in `not_after`. */
export function certificateStatus(certificate: CertificateFacts): CertificateStatus {
  if (certificate.revoked !== null) return 'revoked';
  return certificate.delivered_at === null ? 'pending' : 'active';
}
