import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

// Ports a test names in advance (to restart `serve` on the same endpoint, or to lay out a cluster)
// come from below the kernel's ephemeral range. A port from listen(0) sits inside that range, so
// once it is closed the kernel may hand it to anyone's outgoing connection or listen(0) before the
// test binds it again: CI once saw a restarted serve refused with EADDRINUSE that way.

/** Where the kernel's ephemeral range starts (Linux's default, 32768, when the system does not say). */
function ephemeralStart(): number {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(start) && start > LOWEST + 1000 ? start : 32768;
  } catch {
    return 32768;
  }
}

/** Below this sit the well-known and registered ports services commonly take. */
const LOWEST = 10_000;
const END = ephemeralStart();

/** Listens on host:port, or resolves undefined when it is taken. */
function tryListen(host: string, port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, host, () => resolve(server));
  });
}

/**
 * A port that was free a moment ago on every one of the hosts, drawn at random from below the
 * ephemeral range (so that only another test drawing the same number could take it meanwhile).
 */
export async function portFreeOn(hosts: string[]): Promise<number> {
  for (;;) {
    const port = randomInt(LOWEST, END);
    const held = await Promise.all(hosts.map((host) => tryListen(host, port)));
    await Promise.all(held.map((server) => new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))));
    if (held.every(Boolean)) return port;
  }
}

/** A port that was free a moment ago on 127.0.0.1 (see portFreeOn). */
export const freePort = (): Promise<number> => portFreeOn(['127.0.0.1']);
