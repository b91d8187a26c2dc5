import type { ConnectPacket, PacketRefusal } from './packets.js';
import type { IngestLog, IngestWriter } from './ingest.js';
import type { ConnectRefusal } from './refusals.js';

// What a gateway connection (gateway-connection.ts) knows of its gateway, and what it asks of the
// broker (connection-host.ts implements it): the seam between the protocol and the decisions.

/** The gateway behind a connection, known from its certificate once authenticated. */
export interface GatewaySession {
  gatewayId: string;
  topic: string;
  /** `topic` as bytes: a PUBLISH's topic is compared without decoding it. */
  topicBytes: Buffer;
  /** The serial of the certificate it connected with (lower-case hex): a revocation of it closes the connection. */
  serial: string;
  /** The one topic filter it may subscribe to: its commands (docs/commands.md). */
  commandsTopic: string;
  /** Where it reports its commands' outcome, as bytes (compared like `topicBytes`). */
  responsesTopicBytes: Buffer;
  /**
   * The QoS of the command subscription an earlier persistent session left ([MQTT-3.1.2-4]), or
   * undefined (none, or this is a clean session): CONNACK's session present ([MQTT-3.2.2-2]).
   */
  keptSubscription: number | undefined;
}

/** What a connection needs of the broker; `Connection` is gateway-connection.ts's class (a parameter, so that this file does not import it back). */
export interface ConnectionHost<Connection> {
  log: IngestLog;
  writer: Pick<IngestWriter, 'submit'>;
  maxPayloadBytes: number;
  /** The session of the certificate's gateway, or why it is refused (logged and counted there; refusals.ts has its CONNACK code). */
  authenticate(connection: Connection): Promise<GatewaySession | ConnectRefusal>;
  /** CONNACK 0 went out. */
  connected(connection: Connection): void;
  /** A connected gateway's connection closed; `will` when it is to be published ([MQTT-3.1.2-8]). */
  disconnected(connection: Connection, will?: ConnectPacket['will']): void;
  /** A PUBLISH was refused: foreign topic or payload over the limit (the connection closes). */
  publishRefused(connection: Connection, topic: string, reason: string): void;
  /** A QoS 1 or 2 PUBLISH with packet identifier 0 (the connection closes). */
  protocolViolation(connection: Connection, qos: number): void;
  /** A packet refused on its header alone (the connection closes). */
  packetRefused(connection: Connection, refusal: PacketRefusal): void;
  /** A SUBSCRIBE's filter and its requested QoS: the SUBACK return code, the QoS granted or 0x80 ([MQTT-3.9.3]). */
  subscribe(connection: Connection, filter: string, qos: number): number;
  /** An UNSUBSCRIBE's filter. */
  unsubscribe(connection: Connection, filter: string): void;
  /** A PUBACK of a message the broker sent (a command). */
  acknowledged(connection: Connection, packetId: number): void;
  /** A PUBLISH on the command-responses topic; resolves once handled, rejects when it was not stored (no acknowledgement then). */
  commandResponse(connection: Connection, payload: Buffer): Promise<void>;
}
