import type { BrokerStats } from './broker-stats.js';

/**
 * Why a connection never became a gateway's (docs/gateways-mqtt.md "Who may connect"), in the
 * order a connection meets them: a fixed set, so that /metrics labels never carry free text.
 */
export const HANDSHAKE_REFUSALS = [
  'over_cap',
  'proxy_header',
  'handshake_timeout',
  'tls_handshake_failed',
  'tls_certificate_expired',
  'connect_timeout',
  'protocol_level',
  'unknown_gateway',
  'certificate_revoked',
  'certificate_pending',
  'store_unavailable',
] as const;

export type HandshakeRefusal = (typeof HANDSHAKE_REFUSALS)[number];

/** The broker's refusal counters by reason (the "of which" counters taken out of the totals they are part of). */
export function refusedHandshakes(stats: BrokerStats): Record<HandshakeRefusal, number> {
  return {
    over_cap: stats.connectionsOverCap,
    proxy_header: stats.proxyHeadersRefused,
    handshake_timeout: stats.handshakeTimeouts,
    tls_handshake_failed: stats.handshakesRefused - stats.expiredCertificatesRefused,
    tls_certificate_expired: stats.expiredCertificatesRefused,
    connect_timeout: stats.connectTimeouts,
    protocol_level: stats.protocolLevelsRefused,
    unknown_gateway: stats.connectsRefused - stats.revokedCertificatesRefused - stats.pendingCertificatesRefused,
    certificate_revoked: stats.revokedCertificatesRefused,
    certificate_pending: stats.pendingCertificatesRefused,
    store_unavailable: stats.connectsUnavailable,
  };
}
