import type { Socket } from 'node:net';

/**
 * The client behind each connection: the PROXY v2 header's source address when the balancer sent
 * one, set on the TCP socket and, once the handshake is done, on the TLS socket that wraps it.
 */
const proxiedClients = new WeakMap<Socket, string>();

/** The address of the client behind a connection (TCP or TLS socket): the balancer's client when a PROXY header named one. */
export function clientAddressOf(socket: Socket): string | undefined {
  return proxiedClients.get(socket) ?? socket.remoteAddress;
}

/** The connection (TCP or TLS socket) is on behalf of `client`, as a balancer's PROXY header named it. */
export function setClientAddress(socket: Socket, client: string): void {
  proxiedClients.set(socket, client);
}
