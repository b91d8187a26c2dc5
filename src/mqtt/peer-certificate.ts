import type { TLSSocket } from 'node:tls';

/** What the broker reads of a client certificate: the gateway it names, its serial, when it expires. */
export interface PeerCertificate {
  /** The subject's CN (the gateway id), undefined when absent or given more than once. */
  cn: string | undefined;
  /** Lower-case hex, as stored in gateway_certificates; '' when the peer showed none. */
  serial: string;
  /** ISO 8601, for the log line of an expired certificate. */
  notAfter: string | undefined;
}

const read = new WeakMap<TLSSocket, PeerCertificate>();

/**
 * The client certificate of a connection, read once per connection: the handshake's log fields
 * and the MQTT session both need it, and each read costs; `getPeerX509Certificate()` costs more
 * the first time than `getPeerCertificate()` (bench/README.md "reconnect-storm").
 */
export function peerCertificateOf(socket: TLSSocket): PeerCertificate {
  let peer = read.get(socket);
  if (peer) return peer;
  const certificate = socket.getPeerCertificate();
  const cn = certificate?.subject?.CN as string | string[] | undefined;
  const notAfter = certificate?.valid_to ? new Date(certificate.valid_to) : undefined;
  peer = {
    cn: typeof cn === 'string' ? cn : undefined,
    serial: (certificate?.serialNumber ?? '').toLowerCase(),
    notAfter: notAfter && !Number.isNaN(notAfter.getTime()) ? notAfter.toISOString() : undefined,
  };
  read.set(socket, peer);
  return peer;
}
