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
 * The client certificate of a connection, read once per connection (the handshake's log fields
 * and the MQTT session both need it). `getPeerX509Certificate` and three of its fields cost about
 * a quarter of `getPeerCertificate`, which builds every field and three fingerprints.
 */
export function peerCertificateOf(socket: TLSSocket): PeerCertificate {
  let peer = read.get(socket);
  if (peer) return peer;
  const certificate = socket.getPeerX509Certificate();
  if (certificate === undefined) {
    peer = { cn: undefined, serial: '', notAfter: undefined };
  } else {
    // One attribute per line ("CN=..."), values escaped as RFC 2253 says (a control character as \XX).
    const names = certificate.subject.split('\n').filter((line) => line.startsWith('CN='));
    const notAfter = new Date(certificate.validTo);
    peer = {
      cn: names.length === 1 ? unescapeRfc2253(names[0]!.slice(3)) : undefined,
      serial: certificate.serialNumber.toLowerCase(),
      notAfter: Number.isNaN(notAfter.getTime()) ? undefined : notAfter.toISOString(),
    };
  }
  read.set(socket, peer);
  return peer;
}

function unescapeRfc2253(value: string): string {
  if (!value.includes('\\')) return value;
  return value.replace(/\\([0-9A-Fa-f]{2}|[^])/g, (_, escaped: string) =>
    escaped.length === 2 ? String.fromCharCode(Number.parseInt(escaped, 16)) : escaped,
  );
}
