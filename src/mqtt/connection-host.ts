import type { TLSSocket } from 'node:tls';
import { commandResponsesTopic, commandsTopic, gatewayTopic, topicPrefix } from '../domain/mqtt-topics.js';
import type { Store } from '../store/ports/index.js';
import type { BrokerStats } from './broker-stats.js';
import { clientAddressOf } from './client-address.js';
import type { CommandDelivery } from './commands/delivery.js';
import type { ConnectedGateways } from './connected-gateways.js';
import type { GatewayConnection } from './gateway-connection.js';
import type { ConnectionHost, GatewaySession } from './gateway-session.js';
import type { IngestLog, IngestWriter } from './ingest.js';
import type { ConnectRefusal } from './refusals.js';

/** [MQTT-3.9.3]: the SUBACK return code of a refused filter (gateway-connection.ts gives its MQTT 5 reason). */
const SUBACK_FAILURE = 0x80;

/** What the broker's decisions about gateways need: its log, counters and writer, the store, the gateways connected here. */
export interface HostParts {
  log: IngestLog;
  stats: BrokerStats;
  writer: Pick<IngestWriter, 'submit'>;
  store: Pick<Store, 'ingest'>;
  gateways: ConnectedGateways;
  commands: CommandDelivery;
  maxPayloadBytes: number;
  /** The largest packet a gateway may send, for the log line of one refused over it. */
  maxPacketBytes: number;
  /** The connection was answered CONNACK 0: no longer under the caps and deadlines of unauthenticated connections. */
  authenticated(socket: TLSSocket): void;
}

/** Log fields naming a connection: its gateway once known, else its certificate's CN. */
function whoIs(connection: GatewayConnection): { gateway_id?: string; certificate_cn?: string } {
  return connection.session ? { gateway_id: connection.session.gatewayId } : { certificate_cn: connection.commonName };
}

/**
 * Who may connect: the gateway the certificate's CN names, known to the store, not deleted, its
 * certificate neither revoked nor pending. Username, password and client identifier are ignored:
 * the TLS client certificate is the credential and names the session, so no gateway can take
 * over another's ([MQTT-3.1.4-2]). Its revocation is checked here, once per connection: messages
 * are not looked at again.
 */
async function authenticate(parts: HostParts, connection: GatewayConnection): Promise<GatewaySession | ConnectRefusal> {
  const { log, stats } = parts;
  const cn = connection.commonName;
  const serial = connection.serial;
  let gateway: Awaited<ReturnType<Store['ingest']['connectingGateway']>>;
  try {
    gateway = cn ? await parts.store.ingest.connectingGateway(cn, serial) : undefined;
  } catch (error) {
    // The store cannot answer: refuse as unavailable (refusals.ts has the CONNACK codes); the gateway retries.
    stats.connectsUnavailable++;
    log.warn({ certificate_cn: cn, reason: (error as Error).message }, 'MQTT connect refused: the store cannot answer');
    return 'store_unavailable' as const;
  }
  if (!gateway || gateway.deleted !== null) {
    stats.connectsRefused++;
    log.warn({ certificate_cn: cn, deleted: Boolean(gateway) }, 'MQTT connect refused: unknown or deleted gateway');
    return 'unknown_gateway' as const;
  }
  if (gateway.certificate === 'revoked') {
    stats.connectsRefused++;
    stats.revokedCertificatesRefused++;
    log.warn({ gateway_id: gateway.id, serial }, 'MQTT connect refused: the certificate was revoked');
    return 'certificate_revoked' as const;
  }
  // Its key went only to whoever redeems the token: before that nobody should hold it
  // (docs/gateways.md "No gateway key at rest").
  if (gateway.certificate === 'pending') {
    stats.connectsRefused++;
    stats.pendingCertificatesRefused++;
    log.warn({ gateway_id: gateway.id, serial }, 'MQTT connect refused: the certificate was never handed out (its provisioning token is not redeemed)');
    return 'certificate_pending' as const;
  }
  const topic = gatewayTopic(topicPrefix(gateway.customer_id), gateway.id);
  let keptSubscription: number | undefined;
  try {
    // Before the CONNACK, which says whether a session was kept ([MQTT-3.2.2-2]).
    keptSubscription = await parts.commands.session(gateway.id, connection.cleanSession);
  } catch (error) {
    stats.connectsUnavailable++;
    log.warn({ gateway_id: gateway.id, reason: (error as Error).message }, 'MQTT connect refused: the store cannot answer');
    return 'store_unavailable' as const;
  }
  const responsesTopicBytes = Buffer.from(commandResponsesTopic(topic));
  return { gatewayId: gateway.id, topic, topicBytes: Buffer.from(topic), serial, commandsTopic: commandsTopic(topic), responsesTopicBytes, keptSubscription };
}

/** The broker's side of every gateway connection (gateway-connection.ts): its decisions about gateways, counted and logged. */
export function connectionHost(parts: HostParts): ConnectionHost<GatewayConnection> {
  const { log, stats, gateways, commands } = parts;
  return {
    log,
    writer: parts.writer,
    maxPayloadBytes: parts.maxPayloadBytes,

    authenticate: (connection) => authenticate(parts, connection),

    connected(connection) {
      // From CONNACK 0 on, the connection is a gateway's: no longer under the caps and deadlines of
      // unauthenticated connections.
      parts.authenticated(connection.socket);
      const { gatewayId } = connection.session!;
      stats.connections++;
      stats.connected++;
      log.info({ gateway_id: gatewayId, remote: clientAddressOf(connection.socket) }, 'gateway connected');
      gateways.connected(gatewayId, connection);
      commands.connected(gatewayId, connection.session!.commandsTopic, connection, connection.session!.keptSubscription);
    },

    disconnected(connection, will) {
      const { gatewayId, topic } = connection.session!;
      if (will) {
        if (will.topic !== topic) this.publishRefused(connection, will.topic, `will topic ${JSON.stringify(will.topic)} is not ${topic}`);
        else if (will.payload.length > parts.maxPayloadBytes) this.publishRefused(connection, will.topic, `will payload of ${will.payload.length} bytes exceeds ${parts.maxPayloadBytes}`);
        else parts.writer.submit(gatewayId, will.payload, NO_ACK);
      }
      stats.connected--;
      log.info({ gateway_id: gatewayId }, 'gateway disconnected');
      gateways.disconnected(gatewayId, connection);
      commands.disconnected(gatewayId, connection);
    },

    publishRefused(connection, topic, reason) {
      stats.publishesRefused++;
      log.warn({ ...whoIs(connection), topic, reason }, 'MQTT publish refused, connection closed');
    },

    protocolViolation(connection, qos) {
      stats.protocolViolations++;
      log.warn({ ...whoIs(connection), qos }, 'MQTT protocol violation: PUBLISH with packet identifier 0, connection closed');
    },

    // The packet is refused on its header alone: the body (up to 256 MB) is never buffered.
    packetRefused(connection, refusal) {
      const fields = { ...whoIs(connection), packet_type: refusal.packetType };
      if (refusal.reason === 'oversized') {
        stats.publishesRefused++;
        log.warn({ ...fields, declared_bytes: refusal.packetBytes, limit_bytes: parts.maxPacketBytes }, 'MQTT packet over the size limit refused, connection closed');
      } else {
        // [MQTT-4.8.0-1]: malformed; packet boundaries are lost, so nothing after it can be checked.
        log.warn(fields, 'MQTT packet with a malformed Remaining Length, connection closed');
      }
    },

    // Its own command topic at QoS 0 or 1 (2 is granted as 1: [MQTT-3.9.3], the server may grant
    // less); any other filter, wildcards included, 0x80.
    subscribe(connection, filter, qos) {
      const session = connection.session!;
      if (filter !== session.commandsTopic) {
        stats.subscriptionsRefused++;
        log.warn({ ...whoIs(connection), topic: filter }, 'MQTT subscription refused');
        return SUBACK_FAILURE;
      }
      const granted = Math.min(qos, 1);
      commands.subscribed(session.gatewayId, filter, connection, granted, connection.cleanSession);
      return granted;
    },

    unsubscribe(connection, filter) {
      const session = connection.session!;
      if (filter === session.commandsTopic) commands.unsubscribed(session.gatewayId, connection);
    },

    acknowledged(connection, packetId) {
      commands.acknowledged(connection.session!.gatewayId, connection, packetId);
    },

    commandResponse: (connection, payload) => commands.respond(connection.session!.gatewayId, payload),
  };
}

/** A will is stored like a QoS 0 message: nothing to acknowledge. */
const NO_ACK = (): void => {};
