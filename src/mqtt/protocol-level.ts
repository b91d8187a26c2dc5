import type { TLSSocket } from 'node:tls';

// [MQTT-3.1.2-2] asks for CONNACK 0x01 when a CONNECT's protocol level is one the server does not
// speak. So the first bytes of a connection are read here, before the gateway connection reads its
// CONNECT: just enough to find the CONNECT's protocol name and level.

/**
 * The protocol names and levels the broker speaks: MQTT 3.1 ("MQIsdp", 3), 3.1.1 ("MQTT", 4) and 5
 * ("MQTT", 5; MQTT 5 3.1.2.1, 3.1.2.2). A name and level that disagree (MQTT/3, MQIsdp/4,
 * MQIsdp/5) are no protocol at all: they get CONNACK 0x01, as Mosquitto answers them.
 */
export const SUPPORTED_PROTOCOLS: Readonly<Record<string, number[]>> = { MQIsdp: [3], MQTT: [4, 5] };

/**
 * CONNACK, session present 0, return code 0x01 "unacceptable protocol version" ([MQTT-3.1.2-2],
 * table 3.1). In the 3.1.1 form also for a CONNECT that says 5 with the name of 3.1 (MQTT 5
 * [MQTT-3.1.2-1] lets the server close or answer another protocol): a client that mixes them may
 * not read MQTT 5's properties, and Mosquitto answers these 4 bytes too.
 */
export const CONNACK_UNACCEPTABLE_PROTOCOL_VERSION = Buffer.from([0x20, 0x02, 0x00, 0x01]);

/**
 * The protocol name and level of the CONNECT at the start of `bytes`, 'incomplete' when more bytes
 * are needed to tell, or 'other' when the bytes are not a CONNECT with a protocol name of MQTT
 * (the gateway connection refuses those itself: [MQTT-3.1.0-1], [MQTT-3.1.2-1], [MQTT-4.8.0-1]).
 */
export function protocolOf(bytes: Uint8Array): { name: string; level: number } | 'incomplete' | 'other' {
  if (bytes.length === 0) return 'incomplete';
  if (bytes[0] !== 0x10) return 'other';
  // Remaining Length: 1 to 4 bytes, the high bit says "more" ([MQTT-2.2.3]).
  let at = 1;
  while (true) {
    if (at >= bytes.length) return 'incomplete';
    if (!(bytes[at++]! & 0x80)) break;
    if (at === 5) return 'other';
  }
  if (at + 2 > bytes.length) return 'incomplete';
  const nameLength = (bytes[at]! << 8) | bytes[at + 1]!;
  at += 2;
  if (nameLength !== 4 && nameLength !== 6) return 'other';
  if (at + nameLength + 1 > bytes.length) return 'incomplete';
  const name = Buffer.from(bytes.subarray(at, at + nameLength)).toString('latin1');
  if (name !== 'MQTT' && name !== 'MQIsdp') return 'other';
  return { name, level: bytes[at + nameLength]! };
}

/**
 * Reads the connection's first bytes until the CONNECT's protocol level is known. A supported
 * name and level (or bytes that are no CONNECT of MQTT) puts the bytes back and calls `accept`, which
 * hands the socket on; another gets CONNACK 0x01, the socket is closed ([MQTT-3.1.2-2])
 * and `refuse` is called with the level and name. A socket that closes first calls neither: the
 * connection's CONNECT deadline (admission.ts) covers a peer that sends nothing.
 */
export function checkProtocolLevel(socket: TLSSocket, accept: () => void, refuse: (level: number, name: string) => void): void {
  const chunks: Buffer[] = [];
  const onReadable = () => {
    for (let chunk: Buffer | null; (chunk = socket.read() as Buffer | null) !== null; ) chunks.push(chunk);
    const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    const protocol = protocolOf(bytes);
    if (protocol === 'incomplete') return;
    socket.off('readable', onReadable);
    socket.off('close', forget);
    if (protocol === 'other' || SUPPORTED_PROTOCOLS[protocol.name]!.includes(protocol.level)) {
      socket.off('error', onError);
      socket.unshift(bytes);
      return accept();
    }
    // [MQTT-3.2.2-5]: after a non-zero return code the server closes. Closed once the CONNACK is
    // flushed, not just ended: a half-closed socket stays open as long as the peer keeps its side.
    // What the peer sends meanwhile is read and dropped, so the close is no reset that could
    // overtake the CONNACK.
    socket.end(CONNACK_UNACCEPTABLE_PROTOCOL_VERSION, () => socket.destroy());
    socket.resume();
    refuse(protocol.level, protocol.name);
  };
  // Until the gateway connection has the socket, its errors (a reset peer) are ours to take, or they would be uncaught.
  const onError = () => socket.destroy();
  const forget = () => socket.off('readable', onReadable);
  socket.on('readable', onReadable);
  socket.on('error', onError);
  socket.once('close', forget);
}
