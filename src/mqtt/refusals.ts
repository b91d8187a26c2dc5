/**
 * Why a connection never became a gateway's (docs/gateways-mqtt.md "Who may connect"), in the
 * order a connection meets them: a fixed set, so that /metrics labels never carry free text.
 */
export const HANDSHAKE_REFUSALS = [
  'over_cap',
  'proxy_header',
  'handshake_timeout',
  'tls_handshake_failed',
  'tls_certificate_expired',
  'connect_timeout',
  'protocol_level',
  'unknown_gateway',
  'certificate_revoked',
  'certificate_pending',
  'store_unavailable',
] as const;

export type HandshakeRefusal = (typeof HANDSHAKE_REFUSALS)[number];


/** The MQTT 5 reason codes the broker sends (MQTT 5 2.4, table 2-6). */
export const ReasonCode = {
  SUCCESS: 0x00,
  NO_SUBSCRIPTION_EXISTED: 0x11,
  MALFORMED_PACKET: 0x81,
  PROTOCOL_ERROR: 0x82,
  NOT_AUTHORIZED: 0x87,
  SERVER_UNAVAILABLE: 0x88,
  SERVER_BUSY: 0x89,
  SERVER_SHUTTING_DOWN: 0x8b,
  BAD_AUTHENTICATION_METHOD: 0x8c,
  KEEP_ALIVE_TIMEOUT: 0x8d,
  SESSION_TAKEN_OVER: 0x8e,
  TOPIC_FILTER_INVALID: 0x8f,
  RECEIVE_MAXIMUM_EXCEEDED: 0x93,
  TOPIC_ALIAS_INVALID: 0x94,
  PACKET_TOO_LARGE: 0x95,
  QUOTA_EXCEEDED: 0x97,
  ADMINISTRATIVE_ACTION: 0x98,
  RETAIN_NOT_SUPPORTED: 0x9a,
  QOS_NOT_SUPPORTED: 0x9b,
  SHARED_SUBSCRIPTIONS_NOT_SUPPORTED: 0x9e,
  SUBSCRIPTION_IDENTIFIERS_NOT_SUPPORTED: 0xa1,
  WILDCARD_SUBSCRIPTIONS_NOT_SUPPORTED: 0xa2,
} as const;

/** The refusals of a CONNECT that is well-formed (connection-host.ts decides them), each a label of HANDSHAKE_REFUSALS. */
export type ConnectRefusal = Extract<HandshakeRefusal, 'unknown_gateway' | 'certificate_revoked' | 'certificate_pending' | 'store_unavailable'>;

/**
 * How each refusal is told, by protocol level: a 3.1 / 3.1.1 CONNACK return code ([MQTT-3.2.2-5],
 * table 3.1) or an MQTT 5 CONNACK reason code (MQTT 5 3.2.2.2), and the MQTT 5 reason code of the
 * PUBACK or PUBREC (MQTT 5 3.4.2.1) and DISCONNECT (MQTT 5 3.14.2.1) that end a connected
 * gateway's connection, where 3.1.1 can only close it.
 */
export const REFUSAL_CODES = {
  connect: {
    unknown_gateway: { v3: 5, v5: ReasonCode.NOT_AUTHORIZED },
    certificate_revoked: { v3: 5, v5: ReasonCode.NOT_AUTHORIZED },
    certificate_pending: { v3: 5, v5: ReasonCode.NOT_AUTHORIZED },
    // The gateway retries: 3 is "server unavailable" in both.
    store_unavailable: { v3: 3, v5: ReasonCode.SERVER_UNAVAILABLE },
  } satisfies Record<ConnectRefusal, { v3: number; v5: number }>,
  /** A PUBLISH refused (acknowledged with the code at QoS 1 and 2, then DISCONNECT with it). */
  publish: {
    foreign_topic: ReasonCode.NOT_AUTHORIZED,
    payload_too_large: ReasonCode.QUOTA_EXCEEDED,
  },
  /** Why the server ends a connected gateway's connection: the DISCONNECT it sends first at level 5. */
  close: {
    packet_too_large: ReasonCode.PACKET_TOO_LARGE,
    malformed_length: ReasonCode.MALFORMED_PACKET,
    packet_identifier_zero: ReasonCode.PROTOCOL_ERROR,
    keep_alive: ReasonCode.KEEP_ALIVE_TIMEOUT,
    receive_maximum: ReasonCode.RECEIVE_MAXIMUM_EXCEEDED,
    // Not stored (disk full, database down): the gateway sends the message again after reconnecting.
    not_stored: ReasonCode.SERVER_BUSY,
    taken_over: ReasonCode.SESSION_TAKEN_OVER,
    // Deleted gateway, revoked certificate (connected-gateways.ts).
    administrative: ReasonCode.ADMINISTRATIVE_ACTION,
    shutting_down: ReasonCode.SERVER_SHUTTING_DOWN,
  },
} as const;

export type CloseReason = keyof typeof REFUSAL_CODES.close;
