import { ProtocolError } from './protocol-error.js';
import { ReasonCode } from './refusals.js';

// MQTT 5 properties (MQTT 5 2.2.2): a Variable Byte Integer length, then identifier and value
// pairs. Every property a gateway sends is checked against the table of MQTT 5 2.2.2.2 (its type,
// the packets it may appear in, at most once except User Property), read in place, and handed to
// a visitor for the few the broker uses; the rest are read and ignored.

/** Property identifiers (MQTT 5 2.2.2.2, table 2-4). */
export const Property = {
  PAYLOAD_FORMAT_INDICATOR: 0x01,
  MESSAGE_EXPIRY_INTERVAL: 0x02,
  CONTENT_TYPE: 0x03,
  RESPONSE_TOPIC: 0x08,
  CORRELATION_DATA: 0x09,
  SUBSCRIPTION_IDENTIFIER: 0x0b,
  SESSION_EXPIRY_INTERVAL: 0x11,
  ASSIGNED_CLIENT_IDENTIFIER: 0x12,
  SERVER_KEEP_ALIVE: 0x13,
  AUTHENTICATION_METHOD: 0x15,
  AUTHENTICATION_DATA: 0x16,
  REQUEST_PROBLEM_INFORMATION: 0x17,
  WILL_DELAY_INTERVAL: 0x18,
  REQUEST_RESPONSE_INFORMATION: 0x19,
  RESPONSE_INFORMATION: 0x1a,
  SERVER_REFERENCE: 0x1c,
  REASON_STRING: 0x1f,
  RECEIVE_MAXIMUM: 0x21,
  TOPIC_ALIAS_MAXIMUM: 0x22,
  TOPIC_ALIAS: 0x23,
  MAXIMUM_QOS: 0x24,
  RETAIN_AVAILABLE: 0x25,
  USER_PROPERTY: 0x26,
  MAXIMUM_PACKET_SIZE: 0x27,
  WILDCARD_SUBSCRIPTION_AVAILABLE: 0x28,
  SUBSCRIPTION_IDENTIFIERS_AVAILABLE: 0x29,
  SHARED_SUBSCRIPTION_AVAILABLE: 0x2a,
} as const;

/** The places properties appear in, as bits (the last column of table 2-4; WILL is the will properties of a CONNECT, 3.1.3.2). */
export const In = {
  CONNECT: 1 << 0,
  WILL: 1 << 1,
  CONNACK: 1 << 2,
  PUBLISH: 1 << 3,
  /** PUBACK, PUBREC, PUBREL, PUBCOMP. */
  ACK: 1 << 4,
  SUBSCRIBE: 1 << 5,
  SUBACK: 1 << 6,
  UNSUBSCRIBE: 1 << 7,
  UNSUBACK: 1 << 8,
  DISCONNECT: 1 << 9,
  AUTH: 1 << 10,
} as const;

const BYTE = 1;
const TWO_BYTES = 2;
const FOUR_BYTES = 4;
const VARIABLE = 5;
const STRING = 6;
const BINARY = 7;
const STRING_PAIR = 8;

const REPLIES = In.CONNACK | In.ACK | In.SUBACK | In.UNSUBACK | In.DISCONNECT | In.AUTH;
const MESSAGE = In.PUBLISH | In.WILL;

/** Each identifier's type and where it may appear (MQTT 5 2.2.2.2, table 2-4), indexed by identifier. */
const SPEC: readonly (readonly [type: number, places: number] | undefined)[] = (() => {
  const spec: (readonly [number, number] | undefined)[] = [];
  const P = Property;
  spec[P.PAYLOAD_FORMAT_INDICATOR] = [BYTE, MESSAGE];
  spec[P.MESSAGE_EXPIRY_INTERVAL] = [FOUR_BYTES, MESSAGE];
  spec[P.CONTENT_TYPE] = [STRING, MESSAGE];
  spec[P.RESPONSE_TOPIC] = [STRING, MESSAGE];
  spec[P.CORRELATION_DATA] = [BINARY, MESSAGE];
  spec[P.SUBSCRIPTION_IDENTIFIER] = [VARIABLE, In.PUBLISH | In.SUBSCRIBE];
  spec[P.SESSION_EXPIRY_INTERVAL] = [FOUR_BYTES, In.CONNECT | In.CONNACK | In.DISCONNECT];
  spec[P.ASSIGNED_CLIENT_IDENTIFIER] = [STRING, In.CONNACK];
  spec[P.SERVER_KEEP_ALIVE] = [TWO_BYTES, In.CONNACK];
  spec[P.AUTHENTICATION_METHOD] = [STRING, In.CONNECT | In.CONNACK | In.AUTH];
  spec[P.AUTHENTICATION_DATA] = [BINARY, In.CONNECT | In.CONNACK | In.AUTH];
  spec[P.REQUEST_PROBLEM_INFORMATION] = [BYTE, In.CONNECT];
  spec[P.WILL_DELAY_INTERVAL] = [FOUR_BYTES, In.WILL];
  spec[P.REQUEST_RESPONSE_INFORMATION] = [BYTE, In.CONNECT];
  spec[P.RESPONSE_INFORMATION] = [STRING, In.CONNACK];
  spec[P.SERVER_REFERENCE] = [STRING, In.CONNACK | In.DISCONNECT];
  spec[P.REASON_STRING] = [STRING, REPLIES];
  spec[P.RECEIVE_MAXIMUM] = [TWO_BYTES, In.CONNECT | In.CONNACK];
  spec[P.TOPIC_ALIAS_MAXIMUM] = [TWO_BYTES, In.CONNECT | In.CONNACK];
  spec[P.TOPIC_ALIAS] = [TWO_BYTES, In.PUBLISH];
  spec[P.MAXIMUM_QOS] = [BYTE, In.CONNACK];
  spec[P.RETAIN_AVAILABLE] = [BYTE, In.CONNACK];
  spec[P.USER_PROPERTY] = [STRING_PAIR, ~0];
  spec[P.MAXIMUM_PACKET_SIZE] = [FOUR_BYTES, In.CONNECT | In.CONNACK];
  spec[P.WILDCARD_SUBSCRIPTION_AVAILABLE] = [BYTE, In.CONNACK];
  spec[P.SUBSCRIPTION_IDENTIFIERS_AVAILABLE] = [BYTE, In.CONNACK];
  spec[P.SHARED_SUBSCRIPTION_AVAILABLE] = [BYTE, In.CONNACK];
  return spec;
})();

/** The largest Variable Byte Integer, four bytes (MQTT 5 1.5.5). */
export const MAX_VARIABLE_BYTE_INTEGER = 268_435_455;

/** The Variable Byte Integer at `at`: its value and the offset after it (MQTT 5 1.5.5). */
export function readVariableByteInteger(body: Buffer, at: number, end = body.length): [number, number] {
  let value = 0;
  let multiplier = 1;
  for (let i = 0; i < 4; i++) {
    if (at >= end) throw new ProtocolError('a variable byte integer runs past its end');
    const byte = body[at++]!;
    value += (byte & 0x7f) * multiplier;
    if (!(byte & 0x80)) {
      // [MQTT-1.5.5-1]: the fewest bytes; a last byte of 0 after the first could have been left out.
      if (byte === 0 && i > 0) throw new ProtocolError('a variable byte integer not in its shortest form');
      return [value, at];
    }
    multiplier *= 0x80;
  }
  throw new ProtocolError('a variable byte integer longer than four bytes');
}

/** The Variable Byte Integer encoding of `value` (MQTT 5 1.5.5; the Remaining Length of [MQTT-2.2.3]). */
export function variableByteInteger(value: number): number[] {
  const bytes: number[] = [];
  do {
    let byte = value % 0x80;
    value = Math.floor(value / 0x80);
    if (value > 0) byte |= 0x80;
    bytes.push(byte);
  } while (value > 0);
  return bytes;
}

/** Told each property read: its identifier, its value when an integer, and where its bytes are (strings and binary data: the data only). */
export type PropertyVisitor = (id: number, value: number, start: number, end: number) => void;

const hex = (id: number) => `0x${id.toString(16).padStart(2, '0')}`;

/**
 * Reads the properties at `at` of a packet of kind `place` (an In bit), calls `visit` for each,
 * and returns the offset after them. An identifier unknown or not allowed there, or a value past
 * the Property Length, is malformed; a property repeated is a protocol error (MQTT 5 2.2.2.2).
 */
export function readProperties(body: Buffer, at: number, place: number, visit?: PropertyVisitor): number {
  const [length, start] = readVariableByteInteger(body, at);
  const end = start + length;
  if (end > body.length) throw new ProtocolError(`a Property Length of ${length} runs past the end of the packet`);
  // Identifiers seen, as bits: every identifier is below 64.
  let seenLow = 0;
  let seenHigh = 0;
  let i = start;
  while (i < end) {
    const id = body[i++]!;
    const spec = SPEC[id];
    if (!spec || !(spec[1] & place)) throw new ProtocolError(`property ${hex(id)} ${spec ? 'not allowed in this packet' : 'unknown'}`);
    if (id !== Property.USER_PROPERTY) {
      const bit = 1 << (id & 31);
      const seen = id < 32 ? seenLow : seenHigh;
      if (seen & bit) throw new ProtocolError(`property ${hex(id)} repeated`, ReasonCode.PROTOCOL_ERROR);
      if (id < 32) seenLow |= bit;
      else seenHigh |= bit;
    }
    let value = 0;
    let valueStart = i;
    switch (spec[0]) {
      case BYTE:
        if (i + 1 > end) throw new ProtocolError(`property ${hex(id)} runs past the Property Length`);
        value = body[i++]!;
        break;
      case TWO_BYTES:
        if (i + 2 > end) throw new ProtocolError(`property ${hex(id)} runs past the Property Length`);
        value = body.readUInt16BE(i);
        i += 2;
        break;
      case FOUR_BYTES:
        if (i + 4 > end) throw new ProtocolError(`property ${hex(id)} runs past the Property Length`);
        value = body.readUInt32BE(i);
        i += 4;
        break;
      case VARIABLE:
        [value, i] = readVariableByteInteger(body, i, end);
        break;
      case STRING_PAIR:
        i = skipString(body, skipString(body, i, end, id), end, id);
        break;
      default:
        valueStart = i + 2;
        i = skipString(body, i, end, id);
    }
    checkValue(id, value);
    visit?.(id, value, valueStart, i);
  }
  return end;
}

/** Values table 2-4's sections call a protocol error: 0 where it means nothing, a flag other than 0 or 1. */
function checkValue(id: number, value: number): void {
  switch (id) {
    // MQTT 5 3.3.2.3.4: a Topic Alias of 0 (and any, since ours is 0: 3.2.2.3.8) is refused as 0x94.
    case Property.TOPIC_ALIAS:
      if (value === 0) throw new ProtocolError('a Topic Alias of 0', ReasonCode.TOPIC_ALIAS_INVALID);
      return;
    // MQTT 5 3.1.2.11.3, 3.1.2.11.4, 3.8.2.1.2.
    case Property.RECEIVE_MAXIMUM:
    case Property.MAXIMUM_PACKET_SIZE:
    case Property.SUBSCRIPTION_IDENTIFIER:
      if (value === 0) throw new ProtocolError(`property ${hex(id)} of 0`, ReasonCode.PROTOCOL_ERROR);
      return;
    // MQTT 5 3.3.2.3.2, 3.1.2.11.6, 3.1.2.11.7.
    case Property.PAYLOAD_FORMAT_INDICATOR:
    case Property.REQUEST_PROBLEM_INFORMATION:
    case Property.REQUEST_RESPONSE_INFORMATION:
      if (value > 1) throw new ProtocolError(`property ${hex(id)} of ${value}, not 0 or 1`, ReasonCode.PROTOCOL_ERROR);
  }
}

/** The offset after the two-byte-length data at `at`, which must end by `end`. */
function skipString(body: Buffer, at: number, end: number, id: number): number {
  if (at + 2 > end || at + 2 + body.readUInt16BE(at) > end) throw new ProtocolError(`property ${hex(id)} runs past the Property Length`);
  return at + 2 + body.readUInt16BE(at);
}

/** Properties to write: identifier and value (an integer, or a string). */
export type PropertyList = readonly (readonly [id: number, value: number | string])[];

/** The properties of a packet the broker sends, with their Property Length (MQTT 5 2.2.2). */
export function writeProperties(properties: PropertyList): Buffer {
  const parts: Buffer[] = [];
  for (const [id, value] of properties) {
    const type = SPEC[id]![0];
    if (typeof value === 'string') {
      const text = Buffer.from(value);
      parts.push(Buffer.from([id, text.length >> 8, text.length & 0xff]), text);
    } else if (type === BYTE) parts.push(Buffer.from([id, value]));
    else if (type === TWO_BYTES) parts.push(Buffer.from([id, value >> 8, value & 0xff]));
    else if (type === FOUR_BYTES) {
      const bytes = Buffer.alloc(5);
      bytes[0] = id;
      bytes.writeUInt32BE(value, 1);
      parts.push(bytes);
    } else parts.push(Buffer.from([id, ...variableByteInteger(value)]));
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from(variableByteInteger(body.length)), body]);
}
