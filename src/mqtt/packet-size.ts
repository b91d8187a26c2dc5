import type { Readable } from 'node:stream';

// mqtt-packet buffers a packet until its declared Remaining Length has arrived (up to 256 MB,
// [MQTT-2.2.3]) before anyone can look at it. This module reads only the fixed headers as the
// bytes go by and skips each body by its length, so a packet too large for us is refused when its
// header arrives, not after its body was buffered.

/** Why a connection's byte stream was refused. */
export interface PacketRefusal {
  reason: 'oversized' | 'malformed';
  /** MQTT control packet type of the refused packet (high nibble of its first byte; 3 = PUBLISH). */
  packetType: number;
  /** Size the header declares: fixed header plus Remaining Length (absent when malformed). */
  packetBytes?: number;
}

const FIRST_BYTE = 0;
const LENGTH = 1;
const BODY = 2;

/**
 * Follows packet boundaries through a connection's bytes, chunk by chunk, and refuses the first
 * packet whose total size exceeds the limit or whose Remaining Length is not a valid varint.
 * Costs a few operations per packet header; bodies are skipped by length, never copied.
 */
export class PacketSizeScanner {
  private phase = FIRST_BYTE;
  private packetType = 0;
  private remainingLength = 0;
  private lengthBytes = 0;
  private multiplier = 1;
  private bodyLeft = 0;
  private refusal: PacketRefusal | undefined;

  constructor(readonly maxPacketBytes: number) {}

  /** Scans the next chunk; returns the refusal once a packet is refused (and from then on). */
  scan(chunk: Uint8Array): PacketRefusal | undefined {
    if (this.refusal) return this.refusal;
    const end = chunk.length;
    let at = 0;
    while (at < end) {
      if (this.phase === BODY) {
        const skipped = Math.min(this.bodyLeft, end - at);
        at += skipped;
        this.bodyLeft -= skipped;
        if (this.bodyLeft === 0) this.phase = FIRST_BYTE;
      } else if (this.phase === FIRST_BYTE) {
        this.packetType = chunk[at++]! >> 4;
        this.remainingLength = 0;
        this.lengthBytes = 0;
        this.multiplier = 1;
        this.phase = LENGTH;
      } else {
        // Remaining Length: 7 bits per byte, least significant first, the high bit says "more".
        const byte = chunk[at++]!;
        this.remainingLength += (byte & 0x7f) * this.multiplier;
        this.multiplier *= 0x80;
        this.lengthBytes++;
        if (byte & 0x80) {
          // At most four bytes ([MQTT-2.2.3], 268,435,455): a fourth that asks for a fifth is malformed.
          if (this.lengthBytes === 4) return (this.refusal = { reason: 'malformed', packetType: this.packetType });
          continue;
        }
        const packetBytes = 1 + this.lengthBytes + this.remainingLength;
        if (packetBytes > this.maxPacketBytes) {
          return (this.refusal = { reason: 'oversized', packetType: this.packetType, packetBytes });
        }
        this.bodyLeft = this.remainingLength;
        this.phase = this.bodyLeft > 0 ? BODY : FIRST_BYTE;
      }
    }
    return undefined;
  }
}

/**
 * Watches the bytes its consumer reads from `socket` and calls `refuse` (once) at the first
 * packet over `maxPacketBytes` or with a malformed length; the caller then destroys the socket.
 *
 * Call it after the consumer (aedes) attached its 'readable' listener: the socket is then in
 * paused mode, where 'data' is emitted for each chunk inside `read()`, just before the consumer
 * gets it. So no byte reaches the MQTT parser unscanned, nothing is copied, the consumer still
 * holds the socket itself (and its peer certificate), and no extra stream is needed.
 */
export function limitPacketSize(socket: Readable, maxPacketBytes: number, refuse: (refusal: PacketRefusal) => void): void {
  if (socket.readableFlowing !== false) {
    // A 'data' listener on a socket nobody reads in paused mode would start flowing mode.
    throw new Error(`limitPacketSize needs a socket read in paused mode (readableFlowing is ${socket.readableFlowing})`);
  }
  const scanner = new PacketSizeScanner(maxPacketBytes);
  const onData = (chunk: Buffer) => {
    const refusal = scanner.scan(chunk);
    if (!refusal) return;
    socket.off('data', onData);
    refuse(refusal);
  };
  socket.on('data', onData);
}
