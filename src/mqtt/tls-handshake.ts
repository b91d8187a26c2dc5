import { constants as cryptoConstants } from 'node:crypto';
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import type { ConnectionLimits, UnauthenticatedConnections } from './admission.js';
import { clientAddressOf, setClientAddress } from './client-address.js';
import type { ListenerStats } from './broker-stats.js';
import type { ThrottledLog } from './log-throttle.js';
import { peerCertificateOf } from './peer-certificate.js';
import { checkProtocolLevel } from './protocol-level.js';

/** What the TLS side of the listener needs: the pairs, the deadlines, where to count and log, where a connection goes next. */
export interface TlsHandshakeOptions {
  /** The broker's certificate and key, and the CA that signs gateway certificates (PEM). */
  keyPem: string;
  certPem: string;
  caPem: string;
  limits: ConnectionLimits;
  stats: ListenerStats;
  refusals: ThrottledLog;
  unauthenticated: UnauthenticatedConnections;
  /** A connection of a gateway certificate whose CONNECT is MQTT 3.1, 3.1.1 or 5: gateway-connection.ts's from here. */
  onConnection(socket: TLSSocket): void;
}

/**
 * The TLS server the listener hands admitted TCP connections to: mutual TLS within the handshake
 * deadline, then a CONNECT of a protocol level the broker speaks. Refused handshakes are counted
 * and logged with who the peer was and the certificate it showed.
 */
export function gatewayTlsServer(options: TlsHandshakeOptions): TlsServer {
  const { stats, limits, refusals, unauthenticated } = options;
  const tls = createTlsServer(
    {
      key: options.keyPem,
      cert: options.certPem,
      ca: [options.caPem],
      // Mutual TLS: no certificate, or one the deployment CA did not sign, fails the handshake.
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.2',
      // No session tickets: making and encrypting TLS 1.3's two tickets (the session with the client's
      // certificate) was a fifth of a handshake's server CPU (bench/README.md "reconnect-storm"), and a
      // storm follows a restart, whose new ticket keys would refuse every old ticket anyway.
      secureOptions: cryptoConstants.SSL_OP_NO_TICKET,
      // Node's own handshake timeout leaves the socket open (it only reports tlsClientError) and
      // is not counted from accept. The deadline that closes is UnauthenticatedConnections'; this
      // one is set beyond it, so that it never fires first.
      handshakeTimeout: 2 * limits.handshakeTimeoutMs,
    },
    (socket) => {
      // The identity is the first handshake's certificate (peer-certificate.ts), read once: a TLS 1.2
      // client may not renegotiate another one in, nor make the server pay for handshakes again.
      // Node only reports the attempt as an error (and lets it go on): the connection is closed.
      socket.disableRenegotiation();
      socket.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'ERR_TLS_RENEGOTIATION_DISABLED') socket.destroy();
      });
      const client = unauthenticated.secured(socket);
      if (client === undefined) return socket.destroy();
      setClientAddress(socket, client);
      checkProtocolLevel(
        socket,
        () => options.onConnection(socket),
        (level, name) => {
          stats.protocolLevelsRefused++;
          const cn = peerCertificateOf(socket).cn;
          refusals.warn(
            'protocol level',
            { remote: clientAddressOf(socket), certificate_cn: cn, protocol_level: level, protocol_name: name },
            'MQTT CONNECT of an unsupported protocol level refused with CONNACK 0x01, connection closed',
          );
        },
      );
    },
  );
  reportRefusedHandshakes(tls, stats, refusals);
  return tls;
}

/** Who a peer was and the certificate it showed, kept for the line of a refused handshake. */
interface Peer {
  remote?: string;
  cn?: string;
  serial?: string;
  notAfter?: string;
}

/**
 * Node checks the client's chain and dates after the handshake and, when they fail, closes the
 * socket without an alert and before 'secureConnection': tlsClientError then reports a hang-up,
 * with the reason (e.g. CERT_HAS_EXPIRED) in authorizationError, and the peer already forgotten.
 * 'keylog' is the one event that hands over the TLS socket during the handshake (once per
 * connection, not per message): who it is and the certificate it showed are kept for that line.
 */
function reportRefusedHandshakes(tls: TlsServer, stats: ListenerStats, refusals: ThrottledLog): void {
  const peers = new WeakMap<TLSSocket, Peer>();
  tls.on('keylog', (_line: Buffer, socket: TLSSocket) => {
    if (peers.has(socket)) return;
    const peer: Peer = { remote: clientAddressOf(socket) };
    peers.set(socket, peer);
    socket.prependOnceListener('secure', () => {
      const { cn, serial, notAfter } = peerCertificateOf(socket);
      peer.cn = cn;
      peer.serial = serial || undefined;
      peer.notAfter = notAfter;
    });
  });
  tls.on('tlsClientError', (error: NodeJS.ErrnoException, socket: TLSSocket) => {
    const peer = peers.get(socket) ?? { remote: clientAddressOf(socket) };
    // Closed whatever the error: after its handshake timeout Node would leave it open.
    socket.destroy();
    // (Typed as an Error, it is the OpenSSL code as a string.)
    const verifyError = (socket.authorizationError as unknown as string | null | undefined) ?? undefined;
    const fields = { remote: peer.remote, certificate_cn: peer.cn, serial: peer.serial };
    if (verifyError === 'CERT_HAS_EXPIRED') {
      stats.handshakesRefused++;
      stats.expiredCertificatesRefused++;
      refusals.warn('handshake expired', { ...fields, not_after: peer.notAfter, reason: verifyError }, 'MQTT TLS handshake refused: the client certificate expired');
      return;
    }
    // A peer that hung up (or that a deadline closed) refused nothing.
    if (error.code === 'ECONNRESET' && !verifyError) return;
    const reason = verifyError ?? error.message;
    stats.handshakesRefused++;
    refusals.warn(`handshake ${reason}`, { ...fields, reason }, 'MQTT TLS handshake refused');
  });
}
