import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { UnauthenticatedConnections, type AdmissionStats, type ConnectionLimits } from './admission.js';
import type { IngestLog } from './ingest.js';
import { ThrottledLog } from './log-throttle.js';
import { checkProtocolLevel } from './protocol-level.js';

// Everything a connection goes through before aedes sees it: TCP accept within the caps on
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
  /** TLS handshakes refused: no client certificate, or one the deployment CA did not sign. */
  handshakesRefused: number;
  /** CONNECTs of a protocol level other than 3 (MQTT 3.1) or 4 (3.1.1): CONNACK 0x01, closed. */
  protocolLevelsRefused: number;
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
  /** A connection of a gateway certificate whose CONNECT is MQTT 3.1 or 3.1.1: aedes' from here. */
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
      // Node's own handshake timeout leaves the socket open (it only reports tlsClientError) and
      // is not counted from accept. The deadline that closes is UnauthenticatedConnections'; this
      // one is set beyond it, so that it never fires first.
      handshakeTimeout: 2 * limits.handshakeTimeoutMs,
    },
    (socket) => {
      if (!unauthenticated.secured(socket)) return socket.destroy();
      checkProtocolLevel(
        socket,
        () => options.onConnection(socket),
        (level) => {
          stats.protocolLevelsRefused++;
          const cn = socket.getPeerCertificate()?.subject?.CN;
          refusals.warn(
            'protocol level',
            { remote: socket.remoteAddress, certificate_cn: cn, protocol_level: level },
            'MQTT CONNECT of an unsupported protocol level refused with CONNACK 0x01, connection closed',
          );
        },
      );
    },
  );
  tls.on('tlsClientError', (error: NodeJS.ErrnoException, socket) => {
    // Closed whatever the error: after its handshake timeout Node would leave it open.
    socket.destroy();
    // A peer that hung up (or that a deadline closed) refused nothing.
    if (error.code === 'ECONNRESET') return;
    stats.handshakesRefused++;
    refusals.warn(`handshake ${error.message}`, { remote: socket.remoteAddress, reason: error.message }, 'MQTT TLS handshake refused');
  });

  // TCP is accepted here and handed to the TLS server only within the caps, so that a refused
  // connection costs no TLS state.
  const sockets = new Set<Socket>();
  // noDelay: PUBACKs are tiny; without it Nagle holds them back until the client's delayed ACK.
  const server = createTcpServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    // A reset before anyone reads the socket would otherwise be an uncaught error.
    socket.on('error', () => socket.destroy());
    if (unauthenticated.admit(socket)) tls.emit('connection', socket);
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
