// MQTT 3.1 and 3.1.1 as a gateway speaks it to us: the packets it sends, framed and read in
// place, and the few we send: answers, and the PUBLISH of a command. Everything is read from the
// connection's buffers without copying.

/** Control packet types ([MQTT-2.2.1], table 2.1). */
export const PacketType = {
  CONNECT: 1,
  CONNACK: 2,
  PUBLISH: 3,
  PUBACK: 4,
  PUBREC: 5,
  PUBREL: 6,
  PUBCOMP: 7,
  SUBSCRIBE: 8,
  SUBACK: 9,
  UNSUBSCRIBE: 10,
  UNSUBACK: 11,
  PINGREQ: 12,
  PINGRESP: 13,
  DISCONNECT: 14,
} as const;

/** Why a connection's byte stream was refused before a packet was read. */
export interface PacketRefusal {
  reason: 'oversized' | 'malformed';
  /** MQTT control packet type of the refused packet (high nibble of its first byte; 3 = PUBLISH). */
  packetType: number;
  /** Size the header declares: fixed header plus Remaining Length (absent when malformed). */
  packetBytes?: number;
}

/** Receives each whole packet: its first byte and its body (a view, valid until the next call). */
export type PacketSink = (firstByte: number, body: Buffer) => void;

/**
 * Frames a connection's bytes into packets, chunk by chunk. A packet whose fixed header declares
 * more than `maxPacketBytes`, or whose Remaining Length is not a valid varint, is refused at its
 * header: its body is never buffered. Whole packets inside a chunk are handed over as views of
 * it; only a packet split across chunks is gathered (once, when complete).
 */
export class PacketReader {
  /** Bytes of a packet whose header is not complete yet (at most 4 + 1 bytes). */
  private header: Buffer | undefined;
  /** The chunks of a packet whose header is read and whose body is not complete yet. */
  private parts: Buffer[] = [];
  private partsBytes = 0;
  /** Total size of the packet being gathered in `parts`. */
  private packetBytes = 0;
  private refusal: PacketRefusal | undefined;
  /** The sink closed the connection (stop()): nothing more is read or refused. */
  private stopped = false;

  constructor(
    readonly maxPacketBytes: number,
    private readonly onPacket: PacketSink,
  ) {}

  /**
   * Reads the next chunk; returns the refusal once a packet is refused on its header (and from
   * then on). After stop() it reads nothing and refuses nothing: the sink has refused already.
   */
  push(chunk: Buffer): PacketRefusal | undefined {
    if (this.stopped) return undefined;
    if (this.refusal) return this.refusal;
    let at = 0;
    if (this.partsBytes > 0) {
      const missing = this.packetBytes - this.partsBytes;
      if (chunk.length < missing) {
        this.parts.push(chunk);
        this.partsBytes += chunk.length;
        return undefined;
      }
      this.parts.push(chunk.subarray(0, missing));
      const packet = Buffer.concat(this.parts, this.packetBytes);
      this.parts = [];
      this.partsBytes = 0;
      const bodyStart = this.packetBytes - this.remainingOf(packet);
      this.onPacket(packet[0]!, packet.subarray(bodyStart));
      // [MQTT-4.8.0-1]: once the sink closed the connection, no later packet of the chunk is read.
      if (this.stopped) return undefined;
      at = missing;
    } else if (this.header) {
      chunk = Buffer.concat([this.header, chunk]);
      this.header = undefined;
    }
    const end = chunk.length;
    while (at < end) {
      // Remaining Length: 7 bits per byte, least significant first, the high bit says "more" ([MQTT-2.2.3]).
      let remaining = 0;
      let multiplier = 1;
      let lengthBytes = 0;
      let complete = false;
      for (let i = at + 1; i < end; i++) {
        const byte = chunk[i]!;
        remaining += (byte & 0x7f) * multiplier;
        lengthBytes++;
        if (!(byte & 0x80)) {
          complete = true;
          break;
        }
        // At most four bytes (268,435,455): a fourth that asks for a fifth is malformed.
        if (lengthBytes === 4) return (this.refusal = { reason: 'malformed', packetType: chunk[at]! >> 4 });
        multiplier *= 0x80;
      }
      if (!complete) {
        this.header = Buffer.from(chunk.subarray(at));
        return undefined;
      }
      const packetBytes = 1 + lengthBytes + remaining;
      if (packetBytes > this.maxPacketBytes) return (this.refusal = { reason: 'oversized', packetType: chunk[at]! >> 4, packetBytes });
      if (at + packetBytes > end) {
        this.parts.push(chunk.subarray(at));
        this.partsBytes = end - at;
        this.packetBytes = packetBytes;
        return undefined;
      }
      const firstByte = chunk[at]!;
      const bodyStart = at + 1 + lengthBytes;
      at += packetBytes;
      this.onPacket(firstByte, chunk.subarray(bodyStart, at));
      // The sink may have closed the connection (stop()): read no further.
      if (this.stopped) return undefined;
    }
    return undefined;
  }

  /** Stops reading: later chunks, and later packets of the chunk being read, are ignored (the connection is closing). */
  stop(): void {
    this.stopped = true;
    this.parts = [];
    this.partsBytes = 0;
    this.header = undefined;
  }

  /** The Remaining Length of a whole packet. */
  private remainingOf(packet: Buffer): number {
    let remaining = 0;
    let multiplier = 1;
    for (let i = 1; i < 5; i++) {
      const byte = packet[i]!;
      remaining += (byte & 0x7f) * multiplier;
      if (!(byte & 0x80)) break;
      multiplier *= 0x80;
    }
    return remaining;
  }
}

/** A CONNECT as far as the broker uses it: the credential is the TLS certificate, not these fields. */
export interface ConnectPacket {
  protocolLevel: number;
  cleanSession: boolean;
  /** Seconds; 0 turns the keep alive off ([MQTT-3.1.2-10]). */
  keepAlive: number;
  will?: { topic: string; payload: Buffer; qos: number; retain: boolean };
}

/** Thrown for a packet that breaks the protocol: the connection is closed ([MQTT-4.8.0-1]). */
export class ProtocolError extends Error {}

/** A UTF-8 string of the packet: 2-byte length, then the bytes. */
function readString(body: Buffer, at: number): [string, number] {
  if (at + 2 > body.length) throw new ProtocolError('a string runs past the end of the packet');
  const length = body.readUInt16BE(at);
  const end = at + 2 + length;
  if (end > body.length) throw new ProtocolError('a string runs past the end of the packet');
  return [body.toString('utf8', at + 2, end), end];
}

/** Binary data of the packet: 2-byte length, then the bytes (a view). */
function readBinary(body: Buffer, at: number): [Buffer, number] {
  if (at + 2 > body.length) throw new ProtocolError('binary data runs past the end of the packet');
  const end = at + 2 + body.readUInt16BE(at);
  if (end > body.length) throw new ProtocolError('binary data runs past the end of the packet');
  return [body.subarray(at + 2, end), end];
}

/** Reads a CONNECT body ([MQTT-3.1]); the protocol name and level were checked before (protocol-level.ts). */
export function readConnect(firstByte: number, body: Buffer): ConnectPacket {
  // [MQTT-2.2.2-2]: the fixed header's flags of a CONNECT are 0.
  if ((firstByte & 0x0f) !== 0) throw new ProtocolError('CONNECT with reserved flags set');
  let [name, at] = readString(body, 0);
  if (name !== 'MQTT' && name !== 'MQIsdp') throw new ProtocolError(`protocol name ${JSON.stringify(name)}`);
  if (at + 4 > body.length) throw new ProtocolError('CONNECT too short');
  const protocolLevel = body[at]!;
  const flags = body[at + 1]!;
  const keepAlive = body.readUInt16BE(at + 2);
  at += 4;
  // [MQTT-3.1.2-3]: the reserved flag is 0.
  if (flags & 0x01) throw new ProtocolError('CONNECT with the reserved flag set');
  const willFlag = (flags & 0x04) !== 0;
  const willQos = (flags >> 3) & 0x03;
  const willRetain = (flags & 0x20) !== 0;
  // [MQTT-3.1.2-13], [MQTT-3.1.2-15]: without a will, its QoS and retain are 0; [MQTT-3.1.2-14]: QoS 3 is malformed.
  if (willQos === 3 || (!willFlag && (willQos !== 0 || willRetain))) throw new ProtocolError('CONNECT with inconsistent will flags');
  // The client identifier is read for its length only: the session is the certificate's (connection-host.ts).
  [, at] = readBinary(body, at);
  let will: ConnectPacket['will'];
  if (willFlag) {
    let topic: string;
    let payload: Buffer;
    [topic, at] = readString(body, at);
    [payload, at] = readBinary(body, at);
    will = { topic, payload: Buffer.from(payload), qos: willQos, retain: willRetain };
  }
  if (flags & 0x80) [, at] = readBinary(body, at);
  if (flags & 0x40) [, at] = readBinary(body, at);
  return { protocolLevel, cleanSession: (flags & 0x02) !== 0, keepAlive, will };
}

/** The topic filters of a SUBSCRIBE (each followed by its requested QoS) or UNSUBSCRIBE body, after the packet identifier. */
export function readTopicFilters(body: Buffer, withQos: boolean): string[] {
  const filters: string[] = [];
  let at = 2;
  while (at < body.length) {
    let filter: string;
    [filter, at] = readString(body, at);
    if (withQos) {
      if (at >= body.length || body[at]! > 2) throw new ProtocolError('SUBSCRIBE with a bad requested QoS');
      at++;
    }
    filters.push(filter);
  }
  // [MQTT-3.8.3-3], [MQTT-3.10.3-2]: at least one topic filter.
  if (filters.length === 0) throw new ProtocolError(`${withQos ? 'SUBSCRIBE' : 'UNSUBSCRIBE'} without a topic filter`);
  return filters;
}

/** CONNACK ([MQTT-3.2]); session present is 0: no session state is kept for a publishing gateway. */
export function connack(returnCode: number): Buffer {
  return Buffer.from([PacketType.CONNACK << 4, 2, 0, returnCode]);
}

/** An acknowledgement of two bytes' packet identifier: PUBACK, PUBREC, PUBCOMP, UNSUBACK. */
export function acknowledgement(type: number, packetId: number): Buffer {
  return Buffer.from([type << 4, 2, packetId >> 8, packetId & 0xff]);
}

/** The Remaining Length field for `length` bytes ([MQTT-2.2.3]). */
function remainingLength(length: number): number[] {
  const bytes: number[] = [];
  do {
    let byte = length % 0x80;
    length = Math.floor(length / 0x80);
    if (length > 0) byte |= 0x80;
    bytes.push(byte);
  } while (length > 0);
  return bytes;
}

export const PINGRESP = Buffer.from([PacketType.PINGRESP << 4, 0]);

/**
 * An outbound PUBLISH at QoS 1 ([MQTT-3.3]): a command to a gateway. `dup` marks a resend of a
 * message the gateway may have seen ([MQTT-3.3.1-1]). Packet identifier 0 makes it QoS 0 (no
 * identifier, never resent: [MQTT-2.3.1-5], [MQTT-3.3.1-2]), for a subscription granted QoS 0.
 * `messageExpirySeconds` is for MQTT 5; levels 3 and 4 have no properties.
 */
export function publishPacket(p: { topic: string; payload: Buffer; packetId: number; dup: boolean; messageExpirySeconds?: number }, protocolLevel: number): Buffer {
  void protocolLevel;
  const qos = p.packetId === 0 ? 0 : 1;
  const topicBytes = Buffer.byteLength(p.topic);
  const variable = 2 + topicBytes + (qos ? 2 : 0);
  const length = remainingLength(variable + p.payload.length);
  const packet = Buffer.allocUnsafe(1 + length.length + variable + p.payload.length);
  packet[0] = (PacketType.PUBLISH << 4) | (p.dup && qos ? 0x08 : 0) | (qos << 1);
  let at = 1;
  for (const byte of length) packet[at++] = byte;
  packet.writeUInt16BE(topicBytes, at);
  at += 2 + packet.write(p.topic, at + 2, 'utf8');
  if (qos) at = packet.writeUInt16BE(p.packetId, at);
  p.payload.copy(packet, at);
  return packet;
}

/** SUBACK with one return code per filter ([MQTT-3.9.3]): the granted QoS, or 0x80 for a refused filter. */
export function suback(packetId: number, returnCodes: number[], protocolLevel: number): Buffer {
  void protocolLevel;
  return Buffer.from([PacketType.SUBACK << 4, ...remainingLength(2 + returnCodes.length), packetId >> 8, packetId & 0xff, ...returnCodes]);
}
