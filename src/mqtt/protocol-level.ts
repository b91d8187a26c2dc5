import type { TLSSocket } from 'node:tls';

// [MQTT-3.1.2-2] asks for CONNACK 0x01 when a CONNECT's protocol level is one the server does not
// speak (MQTT 5's CONNECT differs from 3.1.1's after the level). So the first bytes of a
// connection are read here, before the gateway connection reads its CONNECT: just enough to find
// the CONNECT's protocol level.

/** The protocol levels the broker speaks: 3 (MQTT 3.1, "MQIsdp") and 4 (MQTT 3.1.1, "MQTT"). */
export const SUPPORTED_PROTOCOL_LEVELS: readonly number[] = [3, 4];

/** CONNACK, session present 0, return code 0x01 "unacceptable protocol version" ([MQTT-3.1.2-2], table 3.1). */
export const CONNACK_UNACCEPTABLE_PROTOCOL_VERSION = Buffer.from([0x20, 0x02, 0x00, 0x01]);

/**
 * The protocol level of the CONNECT at the start of `bytes`: a number, 'incomplete' when more bytes
 * are needed to tell, or 'other' when the bytes are not a CONNECT with a protocol name of MQTT 3.1
 * or 3.1.1 (the gateway connection refuses those itself: [MQTT-3.1.0-1], [MQTT-3.1.2-1], [MQTT-4.8.0-1]).
 */
export function protocolLevelOf(bytes: Uint8Array): number | 'incomplete' | 'other' {
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
  return bytes[at + nameLength]!;
}

/**
 * Reads the connection's first bytes until the CONNECT's protocol level is known. A supported
 * level (or bytes that are no CONNECT of MQTT 3.x) puts the bytes back and calls `accept`, which
 * hands the socket on; another level gets CONNACK 0x01, the socket is closed ([MQTT-3.1.2-2])
 * and `refuse` is called with the level. A socket that closes first calls neither: the
 * connection's CONNECT deadline (admission.ts) covers a peer that sends nothing.
 */
export function checkProtocolLevel(socket: TLSSocket, accept: () => void, refuse: (level: number) => void): void {
  const chunks: Buffer[] = [];
  const onReadable = () => {
    for (let chunk: Buffer | null; (chunk = socket.read() as Buffer | null) !== null; ) chunks.push(chunk);
    const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    const level = protocolLevelOf(bytes);
    if (level === 'incomplete') return;
    socket.off('readable', onReadable);
    socket.off('close', forget);
    if (level === 'other' || SUPPORTED_PROTOCOL_LEVELS.includes(level)) {
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
    refuse(level);
  };
  // Until the gateway connection has the socket, its errors (a reset peer) are ours to take, or they would be uncaught.
  const onError = () => socket.destroy();
  const forget = () => socket.off('readable', onReadable);
  socket.on('readable', onReadable);
  socket.on('error', onError);
  socket.once('close', forget);
}
