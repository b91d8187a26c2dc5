import { constants as cryptoConstants } from 'node:crypto';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { UnauthenticatedConnections, type AdmissionStats, type ConnectionLimits } from './admission.js';
import type { IngestLog } from './ingest.js';
import { ThrottledLog } from './log-throttle.js';
import { checkProtocolLevel } from './protocol-level.js';
import { peerCertificateOf } from './peer-certificate.js';
import { parseProxyHeader } from './proxy-protocol.js';
import { LOOPBACK_RANGES, addressMatcher } from '../domain/addresses.js';

// Everything a connection goes through before its MQTT is read: TCP accept within the caps on
// unauthenticated connections, mutual TLS within its deadline, a CONNECT of a protocol level the
// broker speaks. The MQTT decisions after that are broker.ts's.

/**
 * Connections the kernel may hold for accept. Node's default of 511 overflows when thousands of
 * gateways reconnect at once (or a flood arrives): the kernel then drops the handshake's last ACK,
 * and a client that waits for the server to speak first stays in a connection the server never
 * saw. Linux caps it at net.core.somaxconn (4096 by default since 5.4).
 */
const LISTEN_BACKLOG = 4096;

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

/**
 * The client behind each connection: the PROXY v2 header's source address when the balancer sent
 * one, set on the TCP socket and, once the handshake is done, on the TLS socket that wraps it.
 */
const proxiedClients = new WeakMap<Socket, string>();

/** The address of the client behind a connection (TCP or TLS socket): the balancer's client when a PROXY header named one. */
export function clientAddressOf(socket: Socket): string | undefined {
  return proxiedClients.get(socket) ?? socket.remoteAddress;
}

export interface ListenerOptions {
  host: string;
  port: number;
  /** The broker's certificate and key, and the CA that signs gateway certificates (PEM). */
  keyPem: string;
  certPem: string;
  caPem: string;
  limits: ConnectionLimits;
  stats: ListenerStats;
  log: IngestLog;
  /**
   * Every connection starts with HAProxy's PROXY protocol v2 header (`send-proxy-v2`), which names
   * the client; a connection without one is refused (--mqtt-proxy-protocol).
   */
  proxyProtocol?: boolean;
  /** With proxyProtocol: the balancers (addresses or CIDR ranges) whose header is believed; any other peer is closed. Loopback when omitted. */
  proxyTrust?: readonly string[];
  /** A connection of a gateway certificate whose CONNECT is MQTT 3.1 or 3.1.1: gateway-connection.ts's from here. */
  onConnection(socket: TLSSocket): void;
}

export interface MqttListener {
  /** The bound port (resolved when 0 was asked for). */
  port: number;
  /** The connection was answered CONNACK 0: no longer under the deadlines and caps. */
  authenticated(socket: TLSSocket): void;
  /** Stops accepting; resolves once every connection has closed. */
  stopAccepting(): Promise<void>;
  /** Destroys every connection still open, those in the TLS handshake too. */
  destroyConnections(): void;
}

/** Listens for MQTT over mutual TLS on host:port, with the deadlines and caps of `limits`. */
export async function listenMqtt(options: ListenerOptions): Promise<MqttListener> {
  const { stats, limits } = options;
  const refusals = new ThrottledLog(options.log);
  const unauthenticated = new UnauthenticatedConnections(limits, stats, refusals);

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
      // certificate) cost ~300 of ~1,500 us of server CPU per handshake, and a reconnect storm follows a
      // restart, whose new ticket keys would refuse every old ticket anyway (docs/gateways-mqtt.md).
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
      proxiedClients.set(socket, client);
      checkProtocolLevel(
        socket,
        () => options.onConnection(socket),
        (level) => {
          stats.protocolLevelsRefused++;
          const cn = peerCertificateOf(socket).cn;
          refusals.warn(
            'protocol level',
            { remote: clientAddressOf(socket), certificate_cn: cn, protocol_level: level },
            'MQTT CONNECT of an unsupported protocol level refused with CONNACK 0x01, connection closed',
          );
        },
      );
    },
  );
  // Node checks the client's chain and dates after the handshake and, when they fail, closes the
  // socket without an alert and before 'secureConnection': tlsClientError then reports a hang-up,
  // with the reason (e.g. CERT_HAS_EXPIRED) in authorizationError, and the peer already forgotten.
  // 'keylog' is the one event that hands over the TLS socket during the handshake (once per
  // connection, not per message): who it is and the certificate it showed are kept for that line.
  const peers = new WeakMap<TLSSocket, { remote?: string; cn?: string; serial?: string; notAfter?: string }>();
  tls.on('keylog', (_line: Buffer, socket: TLSSocket) => {
    if (peers.has(socket)) return;
    const peer: { remote?: string; cn?: string; serial?: string; notAfter?: string } = { remote: clientAddressOf(socket) };
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

  const admit = (socket: Socket, client: string | undefined) => {
    if (unauthenticated.admit(socket, client)) tls.emit('connection', socket);
  };

  /**
   * Reads the PROXY v2 header before anything else, within the handshake deadline, then hands the
   * bytes after it to TLS (Node's TLS socket takes over what the TCP socket has buffered). The
   * caps on unauthenticated connections then count the client's address, not the balancer's.
   */
  const trustedBalancer = addressMatcher(options.proxyTrust ?? LOOPBACK_RANGES);
  const readProxyHeader = (socket: Socket) => {
    let received = Buffer.alloc(0);
    const refuse = (reason: string) => {
      stats.proxyHeadersRefused++;
      refusals.warn('proxy header', { remote: socket.remoteAddress, reason }, 'MQTT connection refused: no valid PROXY protocol v2 header (--mqtt-proxy-protocol)');
      socket.destroy();
    };
    // Whoever may send the header chooses the address that the caps count and the log names.
    if (socket.remoteAddress === undefined || !trustedBalancer(socket.remoteAddress)) {
      stats.proxyHeadersRefused++;
      refusals.warn('proxy peer', { remote: socket.remoteAddress }, 'MQTT connection refused: the peer is not a balancer of --mqtt-proxy-trust');
      socket.destroy();
      return;
    }
    const timer = setTimeout(() => refuse(`no complete header within ${limits.handshakeTimeoutMs} ms`), limits.handshakeTimeoutMs);
    const done = () => {
      clearTimeout(timer);
      socket.off('readable', onReadable);
      socket.off('close', done);
    };
    const onReadable = () => {
      let chunk: Buffer | null;
      while ((chunk = socket.read() as Buffer | null) !== null) {
        received = Buffer.concat([received, chunk]);
        const header = parseProxyHeader(received);
        if (header.kind === 'incomplete') continue;
        done();
        if (header.kind === 'refused') return refuse(header.reason);
        const rest = received.subarray(header.headerBytes);
        if (rest.length) socket.unshift(rest);
        const client = header.kind === 'proxied' ? header.address : socket.remoteAddress;
        if (client !== undefined) proxiedClients.set(socket, client);
        return admit(socket, client);
      }
    };
    socket.on('readable', onReadable);
    // A balancer's TCP health check connects and closes without a byte: nothing to refuse or log.
    socket.once('close', done);
  };

  // TCP is accepted here and handed to the TLS server only within the caps, so that a refused
  // connection costs no TLS state.
  const sockets = new Set<Socket>();
  // noDelay: PUBACKs are tiny; without it Nagle holds them back until the client's delayed ACK.
  const server = createTcpServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    // A reset before anyone reads the socket would otherwise be an uncaught error.
    socket.on('error', () => socket.destroy());
    if (options.proxyProtocol) readProxyHeader(socket);
    else admit(socket, socket.remoteAddress);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port, host: options.host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    authenticated: (socket) => unauthenticated.authenticated(socket),
    stopAccepting: () => new Promise<void>((resolve) => server.close(() => resolve())),
    destroyConnections() {
      for (const socket of sockets) socket.destroy();
    },
  };
}
