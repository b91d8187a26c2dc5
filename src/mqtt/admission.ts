import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { ThrottledLog } from './log-throttle.js';

// A connection costs a file descriptor and TLS state from the moment TCP accepts it, but only a
// CONNACK 0 says that a gateway the deployment knows is behind it. Until then it is
// unauthenticated: it gets a deadline for each step and counts against caps, so that peers
// without a certificate cannot hold sockets open or take every descriptor
// (docs/gateways-mqtt.md, "Unauthenticated connections", has the reasoning behind the numbers).

/** Deadlines and caps for connections that have not been answered CONNACK 0 yet. */
export interface ConnectionLimits {
  /** From TCP accept to the end of the TLS handshake, however the bytes trickle in. */
  handshakeTimeoutMs: number;
  /** From the end of the TLS handshake to the CONNACK. */
  connectTimeoutMs: number;
  /** Unauthenticated connections from one source (an IPv4 address or an IPv6 /64). */
  maxUnauthenticatedPerSource: number;
  /** Unauthenticated connections in all. */
  maxUnauthenticated: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  handshakeTimeoutMs: 10_000,
  connectTimeoutMs: 10_000,
  maxUnauthenticatedPerSource: 1_000,
  maxUnauthenticated: 5_000,
};

/** The counters of this module, part of BrokerStats. */
export interface AdmissionStats {
  /** Connections accepted and not yet answered CONNACK 0, now. */
  unauthenticated: number;
  /** TCP connections closed at accept because a cap on unauthenticated connections was reached. */
  connectionsOverCap: number;
  /** Connections closed because the TLS handshake did not complete within handshakeTimeoutMs. */
  handshakeTimeouts: number;
  /** Connections closed because no CONNACK 0 followed the handshake within connectTimeoutMs. */
  connectTimeouts: number;
}

/**
 * The source a per-source cap counts: an IPv4 address (also when written IPv4-mapped), or the /64
 * of an IPv6 address, since one host or LAN is handed a whole /64 and picks addresses from it freely.
 */
export function sourceOf(address: string): string {
  const plain = address.replace(/%.*$/, '').toLowerCase();
  if (plain.startsWith('::ffff:') && plain.includes('.')) return plain.slice('::ffff:'.length);
  if (!plain.includes(':')) return plain;
  const [head = '', tail] = plain.split('::');
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':').flatMap((group) => (group.includes('.') ? ['0', '0'] : [group])));
  const headGroups = groupsOf(head);
  const tailGroups = tail === undefined ? [] : groupsOf(tail);
  const groups = [...headGroups, ...Array<string>(Math.max(0, 8 - headGroups.length - tailGroups.length)).fill('0'), ...tailGroups];
  return `${groups.slice(0, 4).map((group) => parseInt(group, 16).toString(16)).join(':')}::/64`;
}

interface PendingConnection {
  /** peerOf the socket, taken while it was open (a closed socket may no longer know its peer). */
  peer: string;
  /** The client's address: the socket's peer, or the one a balancer's PROXY header named. */
  client: string;
  source: string;
  socket: Socket;
  tls?: TLSSocket;
  timer: NodeJS.Timeout;
}

/** Identifies a connection on both sides of TLS: the TLS socket and the TCP socket it wraps share the peer. */
const peerOf = (socket: Socket) => `${socket.remoteAddress}|${socket.remotePort}`;

/**
 * The connections accepted and not yet authenticated: admits or refuses each at accept, closes it
 * when a step misses its deadline, forgets it at CONNACK 0 or when it closes.
 */
export class UnauthenticatedConnections {
  private readonly pending = new Map<string, PendingConnection>();
  private readonly perSource = new Map<string, number>();

  constructor(
    private readonly limits: ConnectionLimits,
    private readonly stats: AdmissionStats,
    private readonly refusals: ThrottledLog,
  ) {}

  /**
   * A TCP connection of `address` (its peer, or the client a balancer named) was accepted: starts
   * its handshake deadline, or destroys it (false) when a cap is reached.
   */
  admit(socket: Socket, address: string | undefined): boolean {
    // Gone before we looked (reset while queued for accept): nothing to admit.
    if (address === undefined) return this.refuse(socket);
    const source = sourceOf(address);
    const fromSource = this.perSource.get(source) ?? 0;
    const { maxUnauthenticated, maxUnauthenticatedPerSource } = this.limits;
    if (this.pending.size >= maxUnauthenticated || fromSource >= maxUnauthenticatedPerSource) {
      const perSource = fromSource >= maxUnauthenticatedPerSource;
      this.refusals.warn(
        perSource ? 'cap per source' : 'cap in all',
        perSource
          ? { source, limit: maxUnauthenticatedPerSource, unauthenticated: fromSource }
          : { source, limit: maxUnauthenticated, unauthenticated: this.pending.size },
        `MQTT connection refused: ${perSource ? 'this source has' : 'the broker has'} too many connections not yet authenticated`,
      );
      this.stats.connectionsOverCap++;
      return this.refuse(socket);
    }
    const connection: PendingConnection = { peer: peerOf(socket), client: address, source, socket, timer: this.deadline(socket, address, 'handshake') };
    this.pending.set(connection.peer, connection);
    this.perSource.set(source, fromSource + 1);
    this.stats.unauthenticated = this.pending.size;
    socket.once('close', () => this.forget(connection));
    return true;
  }

  /**
   * The TLS handshake completed: the CONNECT deadline replaces the handshake's. The client's
   * address, or undefined when the connection is no longer known.
   */
  secured(tls: TLSSocket): string | undefined {
    const connection = this.pending.get(peerOf(tls));
    if (!connection) return undefined;
    clearTimeout(connection.timer);
    connection.tls = tls;
    connection.timer = this.deadline(tls, connection.client, 'connect');
    return connection.client;
  }

  /** CONNACK 0 went out: the connection belongs to a gateway now, without deadline or cap. */
  authenticated(tls: TLSSocket): void {
    const connection = this.pending.get(peerOf(tls));
    if (connection?.tls === tls) this.forget(connection);
  }

  private deadline(socket: Socket, client: string, step: 'handshake' | 'connect'): NodeJS.Timeout {
    const handshake = step === 'handshake';
    const timeoutMs = handshake ? this.limits.handshakeTimeoutMs : this.limits.connectTimeoutMs;
    return setTimeout(() => {
      if (handshake) this.stats.handshakeTimeouts++;
      else this.stats.connectTimeouts++;
      this.refusals.warn(
        step,
        { remote: client, timeout_ms: timeoutMs },
        handshake ? 'MQTT connection closed: TLS handshake not completed in time' : 'MQTT connection closed: no CONNECT answered in time after the TLS handshake',
      );
      socket.destroy();
    }, timeoutMs);
  }

  private forget(connection: PendingConnection): void {
    clearTimeout(connection.timer);
    // The close of a connection that was already authenticated.
    if (this.pending.get(connection.peer) !== connection) return;
    this.pending.delete(connection.peer);
    const left = this.perSource.get(connection.source)! - 1;
    if (left === 0) this.perSource.delete(connection.source);
    else this.perSource.set(connection.source, left);
    this.stats.unauthenticated = this.pending.size;
  }

  private refuse(socket: Socket): false {
    socket.destroy();
    return false;
  }
}
