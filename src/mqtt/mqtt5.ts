import { PacketType, ProtocolError, readString, readTopicFilters, type ConnectPacket, type Mqtt5Connect } from './packets.js';
import { In, Property, readProperties, variableByteInteger, writeProperties, type PropertyList, type PropertyVisitor } from './properties.js';
import { ReasonCode } from './refusals.js';

// What only MQTT 5 (protocol level 5) adds to the packets a gateway exchanges with the broker:
// reason codes and properties (MQTT 5 2.2.2, 2.4). The broker tells each gateway in its CONNACK
// what it does not offer (no topic aliases, retain, wildcards, shared subscriptions or
// subscription identifiers; QoS 1 at most), so that a gateway that uses one anyway is refused
// with the reason code that names it.

/** The highest QoS a gateway may use at level 5 (CONNACK's Maximum QoS, MQTT 5 3.2.2.3.4). */
const MAXIMUM_QOS = 1;

/** Session Expiry Interval 0xFFFFFFFF: the session does not expire (MQTT 5 3.1.2.11.2). */
const SESSION_KEPT_UNTIL_CLEAN_START = 0xffff_ffff;

/** What the broker takes from a connection: the CONNACK properties of its limits (MQTT 5 3.2.2.3.3, 3.2.2.3.6). */
export interface ServerLimits {
  /** QoS 1 and 2 messages a gateway may have unacknowledged. */
  receiveMaximum: number;
  /** The largest packet a gateway may send, bytes. */
  maximumPacketSize: number;
}

/**
 * MQTT 5 CONNACK (3.2): session present (3.2.2.1.1: 1 only when Clean Start 0 resumes the kept
 * command subscription; 0 with any refusal), the reason code, the properties.
 */
export function connack5(reasonCode: number, properties: PropertyList = [], sessionPresent = false): Buffer {
  const encoded = writeProperties(properties);
  const flags = sessionPresent && reasonCode === ReasonCode.SUCCESS ? 1 : 0;
  return Buffer.concat([Buffer.from([PacketType.CONNACK << 4, ...variableByteInteger(2 + encoded.length), flags, reasonCode]), encoded]);
}

/** The CONNACK properties of an accepted MQTT 5 gateway (3.2.2.3): what it may not do here, said up front. */
export function acceptedProperties(connect: Mqtt5Connect, limits: ServerLimits, gatewayId: string, cleanStart: boolean): PropertyList {
  const properties: (readonly [number, number | string])[] = [
    [Property.RECEIVE_MAXIMUM, limits.receiveMaximum],
    [Property.MAXIMUM_QOS, MAXIMUM_QOS],
    // Nobody subscribes to a gateway's messages, so a retained copy could never be delivered.
    [Property.RETAIN_AVAILABLE, 0],
    [Property.MAXIMUM_PACKET_SIZE, limits.maximumPacketSize],
    // 0: a PUBLISH with a Topic Alias is refused (3.3.2.3.4); each PUBLISH names its topic.
    [Property.TOPIC_ALIAS_MAXIMUM, 0],
    [Property.WILDCARD_SUBSCRIPTION_AVAILABLE, 0],
    [Property.SUBSCRIPTION_IDENTIFIERS_AVAILABLE, 0],
    [Property.SHARED_SUBSCRIPTION_AVAILABLE, 0],
  ];
  // 3.2.2.3.2: the server says so when it does not keep the session as long as asked. After Clean
  // Start 0 it keeps the command subscription until a Clean Start 1 (docs/commands.md "Delivery"),
  // whatever was asked; after Clean Start 1 it keeps nothing.
  const kept = cleanStart ? 0 : SESSION_KEPT_UNTIL_CLEAN_START;
  if (connect.sessionExpiry !== kept) properties.push([Property.SESSION_EXPIRY_INTERVAL, kept]);
  // 3.2.2.3.7: an empty client identifier is given one; the session is the certificate's gateway anyway.
  if (connect.emptyClientIdentifier) properties.push([Property.ASSIGNED_CLIENT_IDENTIFIER, gatewayId]);
  return properties;
}

/** Refuses what a level 5 CONNECT asks beyond the CONNACK's capabilities: a will of QoS 2 (3.2.2.3.4) or retained (3.2.2.3.5). */
export function checkConnect5(connect: ConnectPacket): void {
  if (connect.will && connect.will.qos > MAXIMUM_QOS) throw new ProtocolError('CONNECT with a will of QoS 2, over the Maximum QoS of 1', ReasonCode.QOS_NOT_SUPPORTED);
  if (connect.will?.retain) throw new ProtocolError('CONNECT with a retained will (retain is not available)', ReasonCode.RETAIN_NOT_SUPPORTED);
}

/** Refuses what a level 5 PUBLISH's fixed header asks beyond the CONNACK: QoS 2 (3.2.2.3.4) or retain (3.2.2.3.5), both with DISCONNECT. */
export function checkPublishFlags5(firstByte: number): void {
  if (((firstByte >> 1) & 0x03) > MAXIMUM_QOS) throw new ProtocolError('PUBLISH of QoS 2, over the Maximum QoS of 1', ReasonCode.QOS_NOT_SUPPORTED);
  if (firstByte & 0x01) throw new ProtocolError('PUBLISH with retain set (retain is not available)', ReasonCode.RETAIN_NOT_SUPPORTED);
}

const checkPublishProperty: PropertyVisitor = (id) => {
  // 3.3.2.3.4: a Topic Alias over the Topic Alias Maximum, 0 here, is refused with 0x94.
  if (id === Property.TOPIC_ALIAS) throw new ProtocolError('PUBLISH with a Topic Alias (the Topic Alias Maximum is 0)', ReasonCode.TOPIC_ALIAS_INVALID);
  // [MQTT-3.3.4-6]: a client's PUBLISH carries no Subscription Identifier.
  if (id === Property.SUBSCRIPTION_IDENTIFIER) throw new ProtocolError('PUBLISH with a Subscription Identifier', ReasonCode.PROTOCOL_ERROR);
};

/**
 * Reads the properties of a level 5 PUBLISH at `at` (3.3.2.3) and returns where its payload
 * starts. They are checked and ignored (Message Expiry, Content Type, Response Topic, Correlation
 * Data, User Property: the message is stored at once, for nobody to receive).
 */
export function publishPayloadStart(body: Buffer, at: number): number {
  // No properties, what mosquitto_pub and mqtt.js send by default: one byte of Property Length 0.
  if (at < body.length && body[at] === 0) return at + 1;
  return readProperties(body, at, In.PUBLISH, checkPublishProperty);
}

/** A level 5 SUBSCRIBE after its packet identifier (3.8.2, 3.8.3): the topic filters, and whether it carries a Subscription Identifier. */
export function readSubscribe5(body: Buffer): { filters: string[]; qos: number[]; subscriptionIdentifier: boolean } {
  let subscriptionIdentifier = false;
  let at = readProperties(body, 2, In.SUBSCRIBE, (id) => {
    if (id === Property.SUBSCRIPTION_IDENTIFIER) subscriptionIdentifier = true;
  });
  const filters: string[] = [];
  const qos: number[] = [];
  while (at < body.length) {
    let filter: string;
    [filter, at] = readString(body, at);
    if (at >= body.length) throw new ProtocolError('SUBSCRIBE without the subscription options of a topic filter');
    const options = body[at++]!;
    // 3.8.3.1: bits 6 and 7 are reserved ([MQTT-3.8.3-5]); QoS 3 is malformed; Retain Handling 3 is a protocol error.
    if (options & 0xc0 || (options & 0x03) === 3) throw new ProtocolError(`SUBSCRIBE with subscription options 0x${options.toString(16)}`);
    if ((options & 0x30) === 0x30) throw new ProtocolError('SUBSCRIBE with a Retain Handling of 3', ReasonCode.PROTOCOL_ERROR);
    filters.push(filter);
    qos.push(options & 0x03);
  }
  // MQTT 5 3.8.3: at least one topic filter.
  if (filters.length === 0) throw new ProtocolError('SUBSCRIBE without a topic filter', ReasonCode.PROTOCOL_ERROR);
  return { filters, qos, subscriptionIdentifier };
}

/**
 * The SUBACK reason code refusing `filter` at level 5 (3.9.3): what the CONNACK said is not
 * available when the filter asks for it, otherwise 0x87 "not authorized" (3.1.1's 0x80).
 */
export function subscriptionRefusal5(filter: string, subscriptionIdentifier: boolean): number {
  // [MQTT-4.7.3-1]: a topic filter has at least one character.
  if (filter.length === 0) return ReasonCode.TOPIC_FILTER_INVALID;
  if (filter.startsWith('$share/')) return ReasonCode.SHARED_SUBSCRIPTIONS_NOT_SUPPORTED;
  if (filter.includes('#') || filter.includes('+')) return ReasonCode.WILDCARD_SUBSCRIPTIONS_NOT_SUPPORTED;
  if (subscriptionIdentifier) return ReasonCode.SUBSCRIPTION_IDENTIFIERS_NOT_SUPPORTED;
  return ReasonCode.NOT_AUTHORIZED;
}

/** The topic filters of a level 5 UNSUBSCRIBE (3.10.2, 3.10.3): properties read and ignored. */
export function readUnsubscribe5(body: Buffer): string[] {
  return readTopicFilters(body, false, readProperties(body, 2, In.UNSUBSCRIBE));
}

/** MQTT 5 UNSUBACK (3.11): no properties, one reason code per filter. */
export function unsuback5(packetId: number, reasonCodes: number[]): Buffer {
  const header = [PacketType.UNSUBACK << 4, ...variableByteInteger(3 + reasonCodes.length), packetId >> 8, packetId & 0xff, 0];
  return Buffer.from([...header, ...reasonCodes]);
}

/**
 * A PUBACK or PUBREC with a reason code (3.4.2.1, 3.5.2.1): the Property Length left out, as a
 * Remaining Length under 4 allows (3.4.2.2). Success keeps the 3.1.1 form of two bytes (3.4.2).
 */
export function acknowledgement5(type: number, packetId: number, reasonCode: number): Buffer {
  return Buffer.from([type << 4, 3, packetId >> 8, packetId & 0xff, reasonCode]);
}

/** A DISCONNECT from the server with its reason code (3.14.2.1); the Property Length left out (3.14.2.2). */
export function disconnect5(reasonCode: number): Buffer {
  return Buffer.from([PacketType.DISCONNECT << 4, 1, reasonCode]);
}

/** The reason code of a gateway's level 5 DISCONNECT (3.14.2.1: 0x00 when the Remaining Length is 0); its properties read and ignored. */
export function readDisconnect5(body: Buffer): number {
  if (body.length === 0) return ReasonCode.SUCCESS;
  if (body.length > 1 && readProperties(body, 1, In.DISCONNECT) !== body.length) throw new ProtocolError('DISCONNECT longer than its properties');
  return body[0]!;
}
