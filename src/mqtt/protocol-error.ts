import { ReasonCode } from './refusals.js';

/**
 * Thrown for a packet that breaks the protocol: the connection is closed ([MQTT-4.8.0-1]). At
 * level 5 the reason code goes out first, in CONNACK before the connection is accepted, else in
 * DISCONNECT: malformed (0x81) when the bytes cannot be read as the packet, protocol error (0x82)
 * or a more specific code when they can but break a rule (MQTT 5 4.13).
 */
export class ProtocolError extends Error {
  constructor(
    message: string,
    readonly reasonCode: number = ReasonCode.MALFORMED_PACKET,
  ) {
    super(message);
  }
}
