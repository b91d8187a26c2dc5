import { randomUUID } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { Aedes, type AuthenticateError, type Client, type PublishPacket } from 'aedes';
import { issueServerCertificate, type CertificateAuthority, type PregeneratedKeys } from '../pki/ca.js';
import type { ServerConfig } from '../server/context.js';
import { ingestMaintenance } from '../store/open.js';
import { CUSTOMERS_PER_SIGNAL, type Store } from '../store/ports.js';
import type { IngestThreads } from './ingest-thread.js';
import { IngestWriter, type IngestLog, type IngestStats } from './ingest.js';
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from './admission.js';
import { clientAddressOf, listenMqtt, type ListenerStats, type MqttListener } from './listener.js';
import { limitPacketSize, type PacketRefusal } from './packet-size.js';
import type { CreatedWindow } from '../domain/payload-limits.js';

/** Largest payload a gateway may publish; bigger ones close the connection. */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

/**
 * Largest MQTT packet (fixed header included) a gateway may send; the connection closes when a
 * header declares more, before the body is buffered. 64 KiB over the payload limit: room for the
 * largest topic MQTT can encode, so only the payload check decides about payload size.
 */
export const MAX_PACKET_BYTES = MAX_PAYLOAD_BYTES + 64 * 1024;

/** Counters of the broker since start (connections and refusals); ingest has its own. */
export interface BrokerStats extends ListenerStats {
  /** Gateways connected now. */
  connected: number;
  /** CONNECTs accepted. */
  connections: number;
  /** CONNECTs refused with "not authorized": unknown or deleted gateway, or a revoked certificate. */
  connectsRefused: number;
  /** PUBLISHes refused (connection closed): foreign topic, payload over 256 KiB, or a packet declaring more than MAX_PACKET_BYTES. */
  publishesRefused: number;
  /** SUBSCRIBE topic filters refused with 0x80. */
  subscriptionsRefused: number;
  /** Connections closed for a protocol violation: a QoS 1 or 2 PUBLISH with packet identifier 0. */
  protocolViolations: number;
}

export interface MqttBroker {
  /** The bound port (resolved when 0 was asked for). */
  port: number;
  stats: BrokerStats;
  ingest: IngestStats;
  /** The ingest threads (writer, checkpointer) and their state. */
  threads: IngestThreads;
  /** Why MQTT cannot store (and acknowledge) messages right now, for /healthz; undefined when it can. */
  fault(): { state: string; reason: string } | undefined;
  /** Stops accepting, commits queued messages, disconnects gateways. */
  close(): Promise<void>;
}

export interface BrokerOptions {
  host: string;
  port: number;
  log: IngestLog;
  /** Key pairs a first start generated in the background (pregenerateDeploymentKeys). */
  keys?: PregeneratedKeys;
  /** What an event's `created` may be (serve --min-created, --max-created-ahead). */
  createdWindow?: CreatedWindow;
  /** Deadlines and caps for connections not yet authenticated (default DEFAULT_CONNECTION_LIMITS). */
  limits?: Partial<ConnectionLimits>;
  /** Every connection starts with a PROXY protocol v2 header from the balancer (serve --mqtt-proxy-protocol). */
  proxyProtocol?: boolean;
}

/** What the broker needs of the server: the store, where the CA lives, its public host name, the clock. */
export interface BrokerContext {
  store: Store;
  /** The deployment CA, which signs the broker's certificate and every gateway's. */
  ca: CertificateAuthority;
  config: Pick<ServerConfig, 'dataDir' | 'mqttPublicHost'>;
  clock: () => number;
}

/** How long the start waits for the signal listener before going on (it then keeps retrying, and /healthz says so). */
const SIGNALS_START_WAIT_MS = 10_000;

/** Gateway ids per `gateways-connected` signal: 150 ids of 36 characters stay well within NOTIFY's 8,000 bytes. */
const CONNECTED_PER_SIGNAL = 150;

/**
 * Tells the other instances which gateways connected here, coalesced: the connections of one
 * turn of the event loop (a reconnect storm brings hundreds) go out as one signal per 150.
 */
class ConnectedSignals {
  private pending: string[] = [];
  private scheduled = false;
  private closed = false;

  constructor(
    private readonly instance: string,
    private readonly signals: Store['signals'],
    private readonly log: IngestLog,
  ) {}

  add(gatewayId: string): void {
    if (this.closed) return;
    this.pending.push(gatewayId);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  close(): void {
    this.closed = true;
  }

  private flush(): void {
    this.scheduled = false;
    const ids = this.pending;
    this.pending = [];
    for (let i = 0; i < ids.length; i += CONNECTED_PER_SIGNAL) {
      const gatewayIds = ids.slice(i, i + CONNECTED_PER_SIGNAL);
      this.signals.publish({ kind: 'gateways-connected', instance: this.instance, gateway_ids: gatewayIds }).catch((error: Error) => {
        // The database is down: other instances will not close their older connections of these
        // gateways; those die with their TCP keepalive or the gateway's own reconnect.
        this.log.warn({ gateways: gatewayIds.length, reason: error.message }, 'could not tell other instances which gateways connected here');
      });
    }
  }
}

/** The gateway behind a connection, known from its certificate once authenticated. */
interface GatewaySession {
  gatewayId: string;
  topic: string;
  /** The serial of the certificate it connected with (lower-case hex): a revocation of it closes the connection. */
  serial: string;
}

const notAuthorized = (message: string): AuthenticateError =>
  // [MQTT-3.2.2-5]: CONNACK with return code 5 "not authorized", then the server closes.
  Object.assign(new Error(message), { returnCode: 5 as AuthenticateError['returnCode'] });

function commonNameOf(client: Client): string | undefined {
  const subject = (client.conn as TLSSocket).getPeerCertificate?.()?.subject;
  const cn = subject?.CN as string | string[] | undefined;
  return typeof cn === 'string' ? cn : undefined;
}

/** The serial of the client certificate, lower-case hex as the store keeps it. */
function serialOf(client: Client): string {
  return ((client.conn as TLSSocket).getPeerCertificate?.()?.serialNumber ?? '').toLowerCase();
}

/**
 * Starts the embedded broker: aedes behind a TLS listener that requires a client certificate
 * signed by the deployment CA, whose CN names the gateway. All protocol decisions are in the
 * hooks below; durable ingest is in IngestWriter.
 */
export async function startBroker(ctx: BrokerContext, options: BrokerOptions): Promise<MqttBroker> {
  const { log } = options;
  const { ca } = ctx;
  const certificate = issueServerCertificate(ca, ctx.config.dataDir, [options.host, ctx.config.mqttPublicHost], await options.keys?.server);
  const { store } = ctx;
  const writer = new IngestWriter({
    locator: store.locator,
    maintenance: ingestMaintenance(store),
    clock: ctx.clock,
    log,
    createdWindow: options.createdWindow,
    // SQLite: the writer thread committed, this thread's live streams read on (within the process).
    onUnannounced: (customers) => {
      for (let i = 0; i < customers.length; i += CUSTOMERS_PER_SIGNAL) {
        store.signals.publish({ kind: 'events-committed', customers: customers.slice(i, i + CUSTOMERS_PER_SIGNAL) }).catch(() => undefined);
      }
    },
  });
  const sessions = new WeakMap<Client, GatewaySession>();
  const stats: BrokerStats = {
    connected: 0,
    connections: 0,
    handshakesRefused: 0,
    connectsRefused: 0,
    publishesRefused: 0,
    subscriptionsRefused: 0,
    protocolLevelsRefused: 0,
    proxyHeadersRefused: 0,
    protocolViolations: 0,
    unauthenticated: 0,
    connectionsOverCap: 0,
    handshakeTimeouts: 0,
    connectTimeouts: 0,
  };

  const broker = new Aedes({
    // Messages in flight through aedes' internal emitter before it queues them. With hundreds of
    // gateways each keeping QoS 1 messages in flight, 100 queued needlessly (nobody subscribes,
    // so the slow-subscriber deadlock this bounds cannot happen).
    concurrency: 1000,
    // aedes refuses a client identifier over 23 characters at protocol level 3, as MQTT 3.1 asks of
    // identifiers the client chose. The identifier it checks is the gateway id that preConnect put
    // there (36 characters), so without this no MQTT 3.1 gateway could connect.
    maxClientsIdLength: 65_535,
    // The session belongs to the gateway, not to whatever client identifier it sends: one
    // session per certificate, and no gateway can take over another's ([MQTT-3.1.4-2]) by
    // choosing its identifier. The CONNECT packet may be modified here (aedes preConnect).
    preConnect(client, packet, callback) {
      const cn = commonNameOf(client);
      if (cn) packet.clientId = cn;
      callback(null, true);
    },

    // Username and password are ignored: the TLS client certificate is the credential. Its
    // revocation is checked here, once per connection: messages are not looked at again.
    authenticate(client, _username, _password, callback) {
      const cn = commonNameOf(client);
      const serial = serialOf(client);
      (cn ? store.ingest.connectingGateway(cn, serial) : Promise.resolve(undefined)).then(
        (gateway) => {
          if (!gateway || gateway.deleted !== null) {
            stats.connectsRefused++;
            log.warn({ certificate_cn: cn, deleted: Boolean(gateway) }, 'MQTT connect refused: unknown or deleted gateway');
            return callback(notAuthorized(`gateway ${cn ?? '(no CN)'} is unknown or deleted`), false);
          }
          if (gateway.revoked) {
            stats.connectsRefused++;
            log.warn({ gateway_id: gateway.id, serial }, 'MQTT connect refused: the certificate was revoked');
            return callback(notAuthorized(`the certificate ${serial} of gateway ${gateway.id} was revoked`), false);
          }
          sessions.set(client, { gatewayId: gateway.id, topic: `scanhub/${gateway.customer_id}/gateway/${gateway.id}`, serial });
          callback(null, true);
        },
        // The store cannot answer: refuse as unavailable ([MQTT-3.2.2-5] return code 3); the gateway retries.
        (error: Error) => {
          log.warn({ certificate_cn: cn, reason: error.message }, 'MQTT connect refused: the store cannot answer');
          callback(Object.assign(new Error(error.message), { returnCode: 3 as AuthenticateError['returnCode'] }), false);
        },
      );
    },

    authorizePublish(client, packet, callback) {
      const session = client ? sessions.get(client) : undefined;
      // [MQTT-2.3.1-1]: a QoS 1 or 2 PUBLISH carries a non-zero packet identifier. One with 0 is
      // a protocol violation, so the connection closes ([MQTT-4.8.0-1]): no PUBACK, nothing stored.
      // (A will message has no packet identifier: undefined, not 0.)
      if (packet.qos > 0 && packet.messageId === 0) {
        stats.protocolViolations++;
        log.warn({ gateway_id: session?.gatewayId, qos: packet.qos }, 'MQTT protocol violation: PUBLISH with packet identifier 0, connection closed');
        return callback(new Error(`QoS ${packet.qos} PUBLISH with packet identifier 0`));
      }
      if (!session || packet.topic !== session.topic) {
        // [MQTT-3.3.5-2]: a PUBLISH the server does not authorize is either acknowledged or the
        // connection is closed; we close, so a misconfigured gateway notices at once.
        return refusePublish(session, packet, `topic ${JSON.stringify(packet.topic)} is not ${session?.topic ?? 'allowed'}`, callback);
      }
      if (packet.payload.length > MAX_PAYLOAD_BYTES) {
        return refusePublish(session, packet, `payload of ${packet.payload.length} bytes exceeds ${MAX_PAYLOAD_BYTES}`, callback);
      }
      // Nobody can subscribe, so a retained copy could never be delivered: keep none in memory
      // (the store is the database). Deviates from [MQTT-3.3.1-5] with no observable difference.
      packet.retain = false;
      // The callback runs after the transaction holding the message committed. aedes writes the
      // QoS 1 PUBACK ([MQTT-4.3.2-2]) right after it, so an acknowledged event is durable.
      writer.submit(session.gatewayId, packet.payload as Buffer, callback);
    },

    // [MQTT-3.8.4-3] / [MQTT-3.9.3-2]: the SUBACK carries 0x80 (failure) for a refused filter;
    // the connection stays open. Gateways only publish.
    authorizeSubscribe(client, subscription, callback) {
      stats.subscriptionsRefused++;
      log.warn({ gateway_id: sessions.get(client)?.gatewayId, topic: subscription.topic }, 'MQTT subscription refused');
      callback(null, null);
    },
  });

  function refusePublish(session: GatewaySession | undefined, packet: PublishPacket, reason: string, callback: (error?: Error | null) => void) {
    stats.publishesRefused++;
    log.warn({ gateway_id: session?.gatewayId, topic: packet.topic, reason }, 'MQTT publish refused, connection closed');
    callback(new Error(reason));
  }

  // The packet is refused on its header alone: the body (up to 256 MB) is never buffered.
  function refusePacket(client: Client, socket: TLSSocket, refusal: PacketRefusal) {
    const session = sessions.get(client);
    const fields = { gateway_id: session?.gatewayId, certificate_cn: session ? undefined : commonNameOf(client), packet_type: refusal.packetType };
    if (refusal.reason === 'oversized') {
      stats.publishesRefused++;
      log.warn({ ...fields, declared_bytes: refusal.packetBytes, limit_bytes: MAX_PACKET_BYTES }, 'MQTT packet over the size limit refused, connection closed');
    } else {
      // [MQTT-4.8.0-1]: malformed; packet boundaries are lost, so nothing after it can be checked.
      log.warn(fields, 'MQTT packet with a malformed Remaining Length, connection closed');
    }
    socket.destroy();
  }

  // From CONNACK 0 on, the connection is a gateway's: no longer under the caps and deadlines of
  // unauthenticated connections.
  broker.on('connackSent', (packet, client) => {
    if (packet.returnCode === 0) listener?.authenticated(client.conn as TLSSocket);
  });
  broker.on('client', (client) => {
    stats.connections++;
    stats.connected++;
    log.info({ gateway_id: sessions.get(client)?.gatewayId, remote: client.conn && clientAddressOf(client.conn as TLSSocket) }, 'gateway connected');
  });
  broker.on('clientDisconnect', (client) => {
    stats.connected--;
    log.info({ gateway_id: sessions.get(client)?.gatewayId }, 'gateway disconnected');
  });
  // Signals of every instance (DESIGN.md "Scale-out"): a deleted gateway, or one whose certificate
  // was revoked, is disconnected wherever it is connected, and a gateway that connected to another instance loses its older connection
  // here.
  const instance = randomUUID();
  /** The connection of each gateway connected here (aedes itself closes an older one of the same gateway). */
  const byGateway = new Map<string, Client>();
  const disconnect = (gatewayId: string, reason: string) => {
    const client = byGateway.get(gatewayId);
    if (!client) return;
    log.info({ gateway_id: gatewayId, reason }, 'gateway disconnected by the service');
    client.close();
  };
  const stopSignals = store.signals.subscribe((signal) => {
    if (signal.kind === 'gateway-deleted') disconnect(signal.gateway_id, 'the gateway was deleted');
    else if (signal.kind === 'certificate-revoked') {
      const client = byGateway.get(signal.gateway_id);
      if (client && sessions.get(client)?.serial === signal.serial) disconnect(signal.gateway_id, `its certificate ${signal.serial} was revoked`);
    } else if (signal.kind === 'gateways-connected' && signal.instance !== instance) {
      for (const id of signal.gateway_ids) disconnect(id, 'the gateway connected to another instance');
    }
  });
  // Signals sent while the listener was down were not heard: look up every connected gateway again.
  const stopResume = store.signals.onResume(() => {
    for (const [id, client] of byGateway) {
      const serial = sessions.get(client)?.serial ?? '';
      store.ingest.connectingGateway(id, serial).then(
        (gateway) => {
          if (!gateway || gateway.deleted !== null) disconnect(id, 'the gateway was deleted');
          else if (gateway.revoked) disconnect(id, `its certificate ${serial} was revoked`);
        },
        () => undefined,
      );
    }
  });
  // Ready only once signals are heard (PostgreSQL: LISTEN is set up), so that a gateway deleted
  // right after start is not missed; a database that fails meanwhile shows in /healthz instead.
  await Promise.race([store.signals.listening(), new Promise((resolve) => setTimeout(resolve, SIGNALS_START_WAIT_MS).unref())]);
  const connected = new ConnectedSignals(instance, store.signals, log);
  broker.on('client', (client) => {
    const gatewayId = sessions.get(client)?.gatewayId;
    if (!gatewayId) return;
    byGateway.set(gatewayId, client);
    connected.add(gatewayId);
  });
  broker.on('clientDisconnect', (client) => {
    const gatewayId = sessions.get(client)?.gatewayId;
    if (gatewayId && byGateway.get(gatewayId) === client) byGateway.delete(gatewayId);
  });

  broker.on('clientError', (client, error) => log.info({ gateway_id: sessions.get(client)?.gatewayId, reason: error.message }, 'gateway connection closed on error'));
  await broker.listen();

  // The counters once a minute while messages arrive: enough to follow ingest from the log.
  let loggedMessages = 0;
  const statsTimer = setInterval(() => {
    if (writer.stats.messages === loggedMessages) return;
    loggedMessages = writer.stats.messages;
    log.info({ ingest: writer.stats, mqtt: stats }, 'ingest counters');
  }, 60_000).unref();

  let listener: MqttListener | undefined;
  try {
    listener = await listenMqtt({
      host: options.host,
      port: options.port,
      keyPem: certificate.keyPem,
      certPem: certificate.certPem,
      caPem: ca.certPem,
      limits: { ...DEFAULT_CONNECTION_LIMITS, ...options.limits },
      proxyProtocol: options.proxyProtocol,
      stats,
      log,
      onConnection(socket) {
        const client = broker.handle(socket);
        // Only now: aedes' 'readable' listener has put the socket in the paused mode this needs.
        limitPacketSize(socket, MAX_PACKET_BYTES, (refusal) => refusePacket(client, socket, refusal));
      },
    });
  } catch (error) {
    // Port taken, address unknown: the threads must not keep the process alive.
    clearInterval(statsTimer);
    await new Promise<void>((resolve) => broker.close(() => resolve()));
    await writer.close();
    throw error;
  }
  const { port } = listener;

  let closing: Promise<void> | undefined;
  return {
    port,
    stats,
    ingest: writer.stats,
    threads: writer.threads,
    fault() {
      const { state, cause } = writer.threads.writer;
      return state === 'restarting' ? { state, reason: `ingest writer restarting after: ${cause?.message}` } : undefined;
    },
    close: () =>
      (closing ??= (async () => {
        clearInterval(statsTimer);
        stopSignals();
        stopResume();
        connected.close();
        const stopped = listener.stopAccepting();
        writer.flush();
        await new Promise<void>((resolve) => broker.close(() => resolve()));
        listener.destroyConnections();
        await writer.close();
        await stopped;
        log.info({ mqtt: stats }, 'MQTT broker closed');
      })()),
  };
}
