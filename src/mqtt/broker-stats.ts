import type { AdmissionStats } from './admission.js';
import { newCommandStats, type CommandStats } from './commands/delivery.js';
import type { IngestLog, IngestStats } from './ingest.js';
import type { HandshakeRefusal } from './refusals.js';

/** The counters of the listener, part of BrokerStats. */
export interface ListenerStats extends AdmissionStats {
  /** TLS handshakes refused: no client certificate, one the deployment CA did not sign, or an expired one. */
  handshakesRefused: number;
  /** Of handshakesRefused: those of a certificate of the deployment CA past its not_after. */
  expiredCertificatesRefused: number;
  /** CONNECTs of a protocol level other than 3 (MQTT 3.1) or 4 (3.1.1): CONNACK 0x01, closed. */
  protocolLevelsRefused: number;
  /** With --mqtt-proxy-protocol: connections closed for a missing, malformed or late PROXY v2 header. */
  proxyHeadersRefused: number;
}

/** Counters of the broker since start (connections and refusals); ingest has its own. */
export interface BrokerStats extends ListenerStats, CommandStats {
  /** Gateways connected now. */
  connected: number;
  /** CONNECTs accepted. */
  connections: number;
  /** CONNECTs refused with "not authorized": unknown or deleted gateway, or a revoked or pending certificate. */
  connectsRefused: number;
  /** Of connectsRefused: those of a certificate the store marks revoked. */
  revokedCertificatesRefused: number;
  /** Of connectsRefused: those of a certificate never handed out (its provisioning token not redeemed). */
  pendingCertificatesRefused: number;
  /** CONNECTs refused with "server unavailable" (return code 3): the store could not answer; the gateway retries. */
  connectsUnavailable: number;
  /** PUBLISHes refused (connection closed): foreign topic, payload over 256 KiB, or a packet declaring more than MAX_PACKET_BYTES. */
  publishesRefused: number;
  /** SUBSCRIBE topic filters refused with 0x80. */
  subscriptionsRefused: number;
  /** Connections closed for a protocol violation: a QoS 1 or 2 PUBLISH with packet identifier 0. */
  protocolViolations: number;
}

/** Every counter at zero, in the order the log lines show them. */
export function newBrokerStats(): BrokerStats {
  return {
    connected: 0,
    connections: 0,
    handshakesRefused: 0,
    expiredCertificatesRefused: 0,
    connectsRefused: 0,
    revokedCertificatesRefused: 0,
    pendingCertificatesRefused: 0,
    connectsUnavailable: 0,
    publishesRefused: 0,
    subscriptionsRefused: 0,
    protocolLevelsRefused: 0,
    proxyHeadersRefused: 0,
    protocolViolations: 0,
    unauthenticated: 0,
    connectionsOverCap: 0,
    handshakeTimeouts: 0,
    connectTimeouts: 0,
    ...newCommandStats(),
  };
}

/**
 * The counters once a minute while messages arrive: enough to follow ingest from the log. The
 * timer does not keep the process alive; clear it at close.
 */
export function logCountersWhileBusy(ingest: IngestStats, stats: BrokerStats, log: IngestLog): NodeJS.Timeout {
  let loggedMessages = 0;
  return setInterval(() => {
    if (ingest.messages === loggedMessages) return;
    loggedMessages = ingest.messages;
    log.info({ ingest, mqtt: stats }, 'ingest counters');
  }, 60_000).unref();
}

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
