import { In, MAX_VARIABLE_BYTE_INTEGER, Property, readProperties, variableByteInteger, writeProperties } from './properties.js';
import { ProtocolError } from './protocol-error.js';
import { ReasonCode } from './refusals.js';

// MQTT 3.1, 3.1.1 and 5 as a gateway speaks it to us: the packets it sends, framed and read in
// place, and the few we answer with. Gateways only publish, so this is all of the protocol the
// broker needs, and the PUBLISH of a command; everything is read from the connection's buffers without copying. What only
// MQTT 5 has (properties, reason codes) is in properties.ts and mqtt5.ts.

export { ProtocolError };

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
  /** Clean Session (3.1.1), Clean Start (MQTT 5 3.1.2.4): the same bit. */
  cleanSession: boolean;
  /** Seconds; 0 turns the keep alive off ([MQTT-3.1.2-10]). */
  keepAlive: number;
  will?: { topic: string; payload: Buffer; qos: number; retain: boolean };
  /** Level 5 only: what the CONNECT's properties ask of the server (MQTT 5 3.1.2.11). */
  v5?: Mqtt5Connect;
}

/** What an MQTT 5 CONNECT asks of the server (MQTT 5 3.1.2.11); its other properties are read and ignored. */
export interface Mqtt5Connect {
  /** Session Expiry Interval, seconds (3.1.2.11.2): the broker keeps no session, and CONNACK says 0 when this is not. */
  sessionExpiry: number;
  /** How many QoS 1 and 2 messages the gateway takes unacknowledged (3.1.2.11.3; 65,535 when absent). */
  receiveMaximum: number;
  /** The largest packet the gateway takes, bytes (3.1.2.11.4; the protocol's largest when absent). */
  maximumPacketSize: number;
  /** The client identifier was empty: CONNACK assigns one (3.2.2.3.7). */
  emptyClientIdentifier: boolean;
}

/** The properties of a level 5 CONNECT (MQTT 5 3.1.2.11). */
function readConnectProperties(body: Buffer, at: number): [Mqtt5Connect, number] {
  const v5: Mqtt5Connect = { sessionExpiry: 0, receiveMaximum: 65_535, maximumPacketSize: 1 + 4 + MAX_VARIABLE_BYTE_INTEGER, emptyClientIdentifier: false };
  let authentication = 0;
  const end = readProperties(body, at, In.CONNECT, (id, value) => {
    if (id === Property.SESSION_EXPIRY_INTERVAL) v5.sessionExpiry = value;
    else if (id === Property.RECEIVE_MAXIMUM) v5.receiveMaximum = value;
    else if (id === Property.MAXIMUM_PACKET_SIZE) v5.maximumPacketSize = value;
    else if (id === Property.AUTHENTICATION_METHOD) authentication |= 1;
    else if (id === Property.AUTHENTICATION_DATA) authentication |= 2;
  });
  // 3.1.2.11.10: Authentication Data without a method is a protocol error. 4.12: a method the
  // server does not support is refused, 0x8C; the certificate is the only credential here.
  if (authentication === 2) throw new ProtocolError('CONNECT with Authentication Data and no Authentication Method', ReasonCode.PROTOCOL_ERROR);
  if (authentication) throw new ProtocolError('CONNECT with an Authentication Method (extended authentication is not supported)', ReasonCode.BAD_AUTHENTICATION_METHOD);
  return [v5, end];
}

/** A UTF-8 string of the packet: 2-byte length, then the bytes. */
export function readString(body: Buffer, at: number): [string, number] {
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

/** Reads a CONNECT body ([MQTT-3.1], MQTT 5 3.1); the protocol name and level were checked before (protocol-level.ts). */
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
  let v5: Mqtt5Connect | undefined;
  if (protocolLevel === 5) [v5, at] = readConnectProperties(body, at);
  // The client identifier is read for its length only: the session is the certificate's (connection-host.ts).
  let clientIdentifier: Buffer;
  [clientIdentifier, at] = readBinary(body, at);
  if (v5) v5.emptyClientIdentifier = clientIdentifier.length === 0;
  let will: ConnectPacket['will'];
  if (willFlag) {
    let topic: string;
    let payload: Buffer;
    // MQTT 5 3.1.3.2: the will's properties come first; read and ignored (the will is stored as soon as the connection drops).
    if (v5) at = readProperties(body, at, In.WILL);
    [topic, at] = readString(body, at);
    [payload, at] = readBinary(body, at);
    will = { topic, payload: Buffer.from(payload), qos: willQos, retain: willRetain };
  }
  if (flags & 0x80) [, at] = readBinary(body, at);
  if (flags & 0x40) [, at] = readBinary(body, at);
  return { protocolLevel, cleanSession: (flags & 0x02) !== 0, keepAlive, will, v5 };
}

/** The topic filters of a SUBSCRIBE (each followed by its requested QoS) or UNSUBSCRIBE body from `at` (after the packet identifier, and at level 5 the properties). */
export function readTopicFilters(body: Buffer, withQos: boolean, at = 2): string[] {
  const filters: string[] = [];
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

/**
 * CONNACK ([MQTT-3.2]). Session present is 1 only when a persistent session resumes state the
 * server kept (the gateway's command subscription, [MQTT-3.2.2-2]); 0 for a clean session
 * ([MQTT-3.2.2-1]) and with any refusal ([MQTT-3.2.2-4]).
 */
export function connack(returnCode: number, sessionPresent = false): Buffer {
  return Buffer.from([PacketType.CONNACK << 4, 2, sessionPresent && returnCode === 0 ? 1 : 0, returnCode]);
}

/** An acknowledgement of two bytes' packet identifier: PUBACK, PUBREC, PUBCOMP, UNSUBACK. */
export function acknowledgement(type: number, packetId: number): Buffer {
  return Buffer.from([type << 4, 2, packetId >> 8, packetId & 0xff]);
}

export const PINGRESP = Buffer.from([PacketType.PINGRESP << 4, 0]);

/**
 * A PUBLISH from the broker: a command to a gateway ([MQTT-3.3]; MQTT 5 3.3). QoS 1, DUP when sent
 * again ([MQTT-3.3.1-1]); packet identifier 0 makes it QoS 0 (no identifier, never resent:
 * [MQTT-2.3.1-5], [MQTT-3.3.1-2]), for a subscription granted QoS 0. At level 5 its properties
 * carry the Message Expiry Interval, the seconds the message has left (MQTT 5 3.3.2.3.3); 3.1 and
 * 3.1.1 have no place for it.
 */
export function publishPacket(p: { topic: string; payload: Buffer; packetId: number; dup: boolean; messageExpirySeconds?: number }, protocolLevel: number): Buffer {
  const qos = p.packetId === 0 ? 0 : 1;
  const topic = Buffer.from(p.topic);
  const properties =
    protocolLevel === 5 ? writeProperties(p.messageExpirySeconds === undefined ? [] : [[Property.MESSAGE_EXPIRY_INTERVAL, p.messageExpirySeconds]]) : Buffer.alloc(0);
  const packetId = qos ? Buffer.from([p.packetId >> 8, p.packetId & 0xff]) : Buffer.alloc(0);
  const remaining = 2 + topic.length + packetId.length + properties.length + p.payload.length;
  const header = Buffer.from([(PacketType.PUBLISH << 4) | (p.dup && qos ? 0x08 : 0) | (qos << 1), ...variableByteInteger(remaining), topic.length >> 8, topic.length & 0xff]);
  return Buffer.concat([header, topic, packetId, properties, p.payload]);
}

/** SUBACK ([MQTT-3.9]; MQTT 5 3.9): a return or reason code per topic filter; at level 5 after an empty property block. */
export function suback(packetId: number, returnCodes: number[], protocolLevel: number): Buffer {
  const properties = protocolLevel === 5 ? [0] : [];
  const remaining = 2 + properties.length + returnCodes.length;
  return Buffer.from([PacketType.SUBACK << 4, ...variableByteInteger(remaining), packetId >> 8, packetId & 0xff, ...properties, ...returnCodes]);
}
