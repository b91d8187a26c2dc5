import { readDisconnect5 } from './mqtt5.js';
import { PacketType, ProtocolError, acknowledgement } from './packets.js';
import { ReasonCode } from './refusals.js';

// The packets a connected gateway sends besides PUBLISH, checked and read here; what each does
// to the connection is its handlers' (gateway-connection.ts).

export interface ControlHandlers {
  /** PINGREQ: PINGRESP at once. */
  ping(): void;
  /** An answer in the connection's order of writes (after the acknowledgements before it). */
  write(packet: Buffer): void;
  subscribe(body: Buffer): void;
  unsubscribe(body: Buffer): void;
  /** DISCONNECT from the gateway: whether its will is discarded. */
  disconnect(discardWill: boolean): void;
  /** PUBACK of a message the broker sent (a command). */
  acknowledged(packetId: number): void;
}

/** A connected gateway's packet other than PUBLISH ([MQTT-3.4] to [MQTT-3.14]; MQTT 5 the same clauses at `level` 5). */
export function onControlPacket(firstByte: number, body: Buffer, level: number, on: ControlHandlers): void {
  const type = firstByte >> 4;
  const flags = firstByte & 0x0f;
  switch (type) {
    case PacketType.PINGREQ:
      return on.ping();
    case PacketType.PUBREL:
      // [MQTT-3.6.1-1]: flags 0010. The message was stored at its PUBLISH: release is only acknowledged.
      if (flags !== 0x02 || body.length < 2) throw new ProtocolError('malformed PUBREL');
      return on.write(acknowledgement(PacketType.PUBCOMP, body.readUInt16BE(0)));
    case PacketType.SUBSCRIBE:
      if (flags !== 0x02 || body.length < 2) throw new ProtocolError('malformed SUBSCRIBE');
      return on.subscribe(body);
    case PacketType.UNSUBSCRIBE:
      if (flags !== 0x02 || body.length < 2) throw new ProtocolError('malformed UNSUBSCRIBE');
      return on.unsubscribe(body);
    case PacketType.DISCONNECT:
      if (flags !== 0) throw new ProtocolError('malformed DISCONNECT');
      // [MQTT-3.14.4-3]: the will is discarded; at level 5 unless the reason is 0x04 "with will
      // message" or an error (MQTT 5 3.1.2.5, 3.14.4: only 0x00 discards it).
      return on.disconnect(level !== 5 || readDisconnect5(body) === ReasonCode.SUCCESS);
    case PacketType.PUBACK:
      // [MQTT-4.3.2]: the gateway has the command of this packet identifier.
      if (body.length < 2) throw new ProtocolError('malformed PUBACK');
      return on.acknowledged(body.readUInt16BE(0));
    case PacketType.PUBREC:
    case PacketType.PUBCOMP:
      // Acknowledgements of QoS 2 messages, which the broker never sends: nothing to do.
      return;
    default:
      // A second CONNECT ([MQTT-3.1.0-2]) or a packet only a server sends.
      throw new ProtocolError(`unexpected packet type ${type}`, ReasonCode.PROTOCOL_ERROR);
  }
}
