// MQTT 3.1.1 packets as the benchmarks' load generators write them (bench/mqtt-load.js,
// bench/poison-load.js): just enough to CONNECT and PUBLISH QoS 1 over a raw TLS socket, and to
// frame what comes back (the bare servers of bench/bare-tls-broker.js, bench/commands-floor-server.js).

/** The remaining-length field of MQTT (variable byte integer). */
export function varint(n) {
  const bytes = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 128;
    bytes.push(byte);
  } while (n > 0);
  return Buffer.from(bytes);
}

/** CONNECT: protocol "MQTT" level 4, clean session, keep alive 60 s. */
export function connectPacket(clientId) {
  const id = Buffer.from(clientId);
  const variable = Buffer.from([0, 4, 77, 81, 84, 84, 4, 0x02, 0, 60]);
  const body = Buffer.concat([variable, Buffer.from([id.length >> 8, id.length & 255]), id]);
  return Buffer.concat([Buffer.from([0x10]), varint(body.length), body]);
}

/** PUBLISH QoS 1 of the payload to the topic with the packet id. */
export function publishPacket(topic, packetId, payload) {
  const topicBytes = Buffer.from(topic);
  const remaining = 2 + topicBytes.length + 2 + payload.length;
  return Buffer.concat([
    Buffer.from([0x32]),
    varint(remaining),
    Buffer.from([topicBytes.length >> 8, topicBytes.length & 255]),
    topicBytes,
    Buffer.from([packetId >> 8, packetId & 255]),
    payload,
  ]);
}

/** [header length, remaining length] of the packet at the start of `bytes`; undefined until it is whole. */
export function frameOf(bytes) {
  let length = 0;
  let at = 1;
  for (let multiplier = 1; ; multiplier *= 128) {
    if (at >= bytes.length || at > 4) return undefined;
    const byte = bytes[at++];
    length += (byte & 0x7f) * multiplier;
    if (!(byte & 0x80)) break;
  }
  return bytes.length >= at + length ? [at, length] : undefined;
}
