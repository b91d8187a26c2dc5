import type { Socket } from 'node:net';

/**
 * TLS handshakes begun per turn of the event loop. A handshake's first flight (key share, the
 * server's signature) costs about 1 ms of CPU and runs when its ClientHello is read; after a
 * restart every gateway's arrives at once, so one turn would otherwise read a thousand of them
 * before it read anything else: a connected gateway's PUBLISH, the writer's answer that releases
 * its PUBACK, an HTTP request, each waited a second or more (bench/README.md, "Issue 17:
 * reconnect storm"). 16 keeps a turn to a few tens of milliseconds; the handshakes take the same
 * CPU as before, in order of arrival.
 */
export const HANDSHAKES_PER_TURN = 16;

/**
 * Hands accepted connections to TLS at most `perTurn` per turn of the event loop (a setImmediate
 * each), first accepted first; one closed while it waited is skipped. The handshake deadline runs
 * from accept (admission.ts), so time spent waiting here counts against it.
 */
export class HandshakePacer {
  private queue: Socket[] = [];
  private head = 0;
  private scheduled = false;

  constructor(
    private readonly begin: (socket: Socket) => void,
    private readonly perTurn = HANDSHAKES_PER_TURN,
  ) {}

  /** Connections accepted and not yet handed to TLS. */
  get waiting(): number {
    return this.queue.length - this.head;
  }

  add(socket: Socket): void {
    this.queue.push(socket);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.turn);
    }
  }

  private readonly turn = (): void => {
    let begun = 0;
    while (begun < this.perTurn && this.head < this.queue.length) {
      const socket = this.queue[this.head]!;
      this.queue[this.head++] = undefined as unknown as Socket;
      if (socket.destroyed) continue;
      this.begin(socket);
      begun++;
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
      this.scheduled = false;
    } else {
      setImmediate(this.turn);
    }
  };
}
