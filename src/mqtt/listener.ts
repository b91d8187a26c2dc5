import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { LOOPBACK_RANGES, addressMatcher } from '../domain/addresses.js';
import { UnauthenticatedConnections, type ConnectionLimits } from './admission.js';
import type { ListenerStats } from './broker-stats.js';
import type { IngestLog } from './ingest.js';
import { ThrottledLog } from './log-throttle.js';
import { readProxyHeader } from './proxy-header-reader.js';
import { gatewayTlsServer } from './tls-handshake.js';

// Everything a connection goes through before its MQTT is read: TCP accept within the caps on
// unauthenticated connections (admission.ts), a PROXY header when a balancer sends one
// (proxy-header-reader.ts), mutual TLS within its deadline and a CONNECT of a protocol level the
// broker speaks (tls-handshake.ts). The MQTT decisions after that are connection-host.ts's.

/**
 * Connections the kernel may hold for accept. Node's default of 511 overflows when thousands of
 * gateways reconnect at once (or a flood arrives): the kernel then drops the handshake's last ACK,
 * and a client that waits for the server to speak first stays in a connection the server never
 * saw. Linux caps it at net.core.somaxconn (4096 by default since 5.4).
 */
const LISTEN_BACKLOG = 4096;

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
  /** A connection of a gateway certificate whose CONNECT is MQTT 3.1, 3.1.1 or 5: gateway-connection.ts's from here. */
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

  const { keyPem, certPem, caPem, onConnection } = options;
  const tls = gatewayTlsServer({ keyPem, certPem, caPem, limits, stats, refusals, unauthenticated, onConnection });
  const admit = (socket: Socket, client: string | undefined) => {
    if (unauthenticated.admit(socket, client)) tls.emit('connection', socket);
  };
  const trustedBalancer = addressMatcher(options.proxyTrust ?? LOOPBACK_RANGES);
  const proxyHeaders = { trusted: trustedBalancer, timeoutMs: limits.handshakeTimeoutMs, stats, refusals, admit };

  // TCP is accepted here and handed to the TLS server only within the caps, so that a refused
  // connection costs no TLS state.
  const sockets = new Set<Socket>();
  // noDelay: PUBACKs are tiny; without it Nagle holds them back until the client's delayed ACK.
  const server = createTcpServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    // A reset before anyone reads the socket would otherwise be an uncaught error.
    socket.on('error', () => socket.destroy());
    if (options.proxyProtocol) readProxyHeader(socket, proxyHeaders);
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
