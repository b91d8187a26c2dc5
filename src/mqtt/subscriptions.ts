import { readSubscribe5, readUnsubscribe5, subscriptionRefusal5, unsuback5 } from './mqtt5.js';
import { PacketType, acknowledgement, readTopicFilters, suback } from './packets.js';
import { ReasonCode } from './refusals.js';

// A connected gateway's SUBSCRIBE and UNSUBSCRIBE, read and answered at its protocol level; who
// may subscribe to what is the host's to say (connection-host.ts: only its command topic).

/** [MQTT-3.9.3]: the SUBACK return code of a refused filter at levels 3 and 4. */
const SUBACK_FAILURE = 0x80;

/** The SUBACK of a SUBSCRIBE `body`, each filter's code asked of `subscribe` (the QoS granted, or 0x80). */
export function subscribeAnswer(body: Buffer, level: number, subscribe: (filter: string, qos: number) => number): Buffer {
  const packetId = body.readUInt16BE(0);
  if (level !== 5) {
    const filters = readTopicFilters(body, true);
    // Each filter is followed by its requested QoS (readTopicFilters checked it).
    let at = 2;
    const codes = filters.map((filter) => {
      at += 2 + Buffer.byteLength(filter) + 1;
      return subscribe(filter, body[at - 1]!);
    });
    // [MQTT-3.8.4-3] / [MQTT-3.9.3-2]: one return code per filter, 0x80 for a refused one; the connection stays open.
    return suback(packetId, codes, level);
  }
  // MQTT 5 3.9.3: a reason code per filter, saying why one is refused; the connection stays open.
  // Subscription identifiers are not supported (the CONNACK says so), so with one nothing is granted.
  const { filters, qos, subscriptionIdentifier } = readSubscribe5(body);
  const codes = filters.map((filter, i) => {
    const code = subscriptionIdentifier ? SUBACK_FAILURE : subscribe(filter, qos[i]!);
    return code === SUBACK_FAILURE ? subscriptionRefusal5(filter, subscriptionIdentifier) : code;
  });
  return suback(packetId, codes, 5);
}

/** The filters of an UNSUBSCRIBE `body` and its UNSUBACK; only `commandsTopic` can have had a subscription. */
export function unsubscribeAnswer(body: Buffer, level: number, commandsTopic: string): { filters: string[]; answer: Buffer } {
  const packetId = body.readUInt16BE(0);
  if (level !== 5) return { filters: readTopicFilters(body, false), answer: acknowledgement(PacketType.UNSUBACK, packetId) };
  // MQTT 5 3.11.3: a reason code per filter.
  const filters = readUnsubscribe5(body);
  const codes = filters.map((filter) => (filter === commandsTopic ? ReasonCode.SUCCESS : ReasonCode.NO_SUBSCRIPTION_EXISTED));
  return { filters, answer: unsuback5(packetId, codes) };
}
