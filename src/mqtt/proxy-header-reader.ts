import type { Socket } from 'node:net';
import { setClientAddress } from './client-address.js';
import type { ListenerStats } from './broker-stats.js';
import type { ThrottledLog } from './log-throttle.js';
import { parseProxyHeader } from './proxy-protocol.js';

/** What reading a PROXY header needs of the listener. */
export interface ProxyHeaderReading {
  /** Whether the peer is a balancer of --mqtt-proxy-trust, whose header is believed. */
  trusted(address: string): boolean;
  /** The whole header must arrive within this (the handshake deadline). */
  timeoutMs: number;
  stats: ListenerStats;
  refusals: ThrottledLog;
  /** The header was read: the connection goes on as `client`'s. */
  admit(socket: Socket, client: string | undefined): void;
}

/**
 * Reads the PROXY v2 header before anything else, within the handshake deadline, then hands the
 * bytes after it to TLS (Node's TLS socket takes over what the TCP socket has buffered). The
 * caps on unauthenticated connections then count the client's address, not the balancer's.
 */
export function readProxyHeader(socket: Socket, reading: ProxyHeaderReading): void {
  const { stats, refusals, timeoutMs } = reading;
  let received = Buffer.alloc(0);
  const refuse = (reason: string) => {
    stats.proxyHeadersRefused++;
    refusals.warn('proxy header', { remote: socket.remoteAddress, reason }, 'MQTT connection refused: no valid PROXY protocol v2 header (--mqtt-proxy-protocol)');
    socket.destroy();
  };
  // Whoever may send the header chooses the address that the caps count and the log names.
  if (socket.remoteAddress === undefined || !reading.trusted(socket.remoteAddress)) {
    stats.proxyHeadersRefused++;
    refusals.warn('proxy peer', { remote: socket.remoteAddress }, 'MQTT connection refused: the peer is not a balancer of --mqtt-proxy-trust');
    socket.destroy();
    return;
  }
  const timer = setTimeout(() => refuse(`no complete header within ${timeoutMs} ms`), timeoutMs);
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
      if (client !== undefined) setClientAddress(socket, client);
      return reading.admit(socket, client);
    }
  };
  socket.on('readable', onReadable);
  // A balancer's TCP health check connects and closes without a byte: nothing to refuse or log.
  socket.once('close', done);
}
