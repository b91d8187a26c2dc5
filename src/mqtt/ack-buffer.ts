import { PacketType } from './packets.js';

/**
 * The PUBACKs (QoS 1) and PUBRECs (QoS 2) of one connection that one commit of the ingest writer
 * released, gathered and handed to `write` as one buffer on the next tick (or at `flush()`): one socket write per
 * connection and commit rather than one per message.
 */
export class AckBuffer {
  private acks: Buffer | undefined;
  private bytes = 0;

  constructor(private readonly write: (acks: Buffer) => void) {}

  add(qos: number, packetId: number): void {
    this.acks ??= Buffer.allocUnsafe(4 * 64);
    if (this.bytes + 4 > this.acks.length) {
      const larger = Buffer.allocUnsafe(this.acks.length * 2);
      this.acks.copy(larger, 0, 0, this.bytes);
      this.acks = larger;
    }
    const at = this.bytes;
    this.acks[at] = (qos === 1 ? PacketType.PUBACK : PacketType.PUBREC) << 4;
    this.acks[at + 1] = 2;
    this.acks[at + 2] = packetId >> 8;
    this.acks[at + 3] = packetId & 0xff;
    if (at === 0) process.nextTick(this.flush);
    this.bytes = at + 4;
  }

  /** Writes what is gathered now (before a connection's last packet). */
  readonly flush = (): void => {
    const bytes = this.bytes;
    if (bytes === 0) return;
    const acks = this.acks!;
    this.bytes = 0;
    this.acks = undefined;
    this.write(bytes === acks.length ? acks : acks.subarray(0, bytes));
  };
}
