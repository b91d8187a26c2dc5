import { randomUUID } from 'node:crypto';
import { issueServerCertificate, type CertificateAuthority, type PregeneratedKeys } from '../pki/ca.js';
import type { ServerConfig } from '../server/context.js';
import { ingestMaintenance } from '../store/open.js';
import { CUSTOMERS_PER_SIGNAL, type DeletedBatch, type Store } from '../store/ports/index.js';
import type { DeletionJob, IngestThreads } from './ingest-thread.js';
import { IngestWriter, type IngestLog, type IngestStats } from './ingest.js';
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from './admission.js';
import { clientAddressOf, listenMqtt, type ListenerStats, type MqttListener } from './listener.js';
import { GatewayConnection, type ConnectionHost } from './gateway-connection.js';
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
  /** CONNECTs refused with "not authorized": unknown or deleted gateway, or a revoked or pending certificate. */
  connectsRefused: number;
  /** Of connectsRefused: those of a certificate the store marks revoked. */
  revokedCertificatesRefused: number;
  /** Of connectsRefused: those of a certificate never handed out (its provisioning token not redeemed). */
  pendingCertificatesRefused: number;
  /** CONNECTs refused with "server unavailable" (return code 3): the store could not answer; the gateway retries. */
  connectsUnavailable: number;
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
  /** Deletes one batch of old events in the ingest writer thread, between its commits (the retention sweeper's batches). */
  deleteEvents(job: DeletionJob): Promise<DeletedBatch>;
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
  /** The balancers whose PROXY header is believed (serve --mqtt-proxy-trust); loopback when omitted. */
  proxyTrust?: readonly string[];
  /** Told the seconds each ingest batch took from hand-over to the writer thread until its result (IngestOptions.onCommit). */
  onCommit?: (seconds: number) => void;
}

/** What the broker needs of the server: the store, where the CA lives, its public host name, the clock. */
export interface BrokerContext {
  store: Store;
  /** The deployment CA, which signs the broker's certificate and every gateway's. */
  ca: CertificateAuthority;
  config: Pick<ServerConfig, 'dataDir' | 'mqttPublicHost'>;
  clock: () => number;
}

/** [MQTT-3.2.2-5], table 3.1: CONNACK return codes that refuse a connection. */
const CONNACK_SERVER_UNAVAILABLE = 3;
const CONNACK_NOT_AUTHORIZED = 5;

/** At shutdown, how long connections get to take their last acknowledgements before they are cut. */
const CLOSE_GRACE_MS = 2_000;

/** Ends every connection (its unsent bytes go out first); resolves once all closed, or after `graceMs`. */
async function closeConnections(connections: Set<GatewayConnection>, graceMs: number): Promise<void> {
  const closed = [...connections].map((connection) => new Promise((resolve) => connection.socket.once('close', resolve)));
  for (const connection of connections) connection.socket.end();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(closed), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
  clearTimeout(timer);
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

/** Log fields naming a connection: its gateway once known, else its certificate's CN. */
function whoIs(connection: GatewayConnection): { gateway_id?: string; certificate_cn?: string } {
  return connection.session ? { gateway_id: connection.session.gatewayId } : { certificate_cn: connection.commonName };
}

/**
 * Starts the embedded broker: a TLS listener that requires a client certificate signed by the
 * deployment CA, whose CN names the gateway, and for each connection the MQTT of a publishing
 * gateway (gateway-connection.ts). All decisions about gateways are in the host below; durable
 * ingest is in IngestWriter.
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
    storage: store.storage,
    onCommit: options.onCommit,
    // SQLite: the writer thread committed, this thread's live streams read on (within the process).
    onUnannounced: (customers) => {
      for (let i = 0; i < customers.length; i += CUSTOMERS_PER_SIGNAL) {
        store.signals.publish({ kind: 'events-committed', customers: customers.slice(i, i + CUSTOMERS_PER_SIGNAL) }).catch(() => undefined);
      }
    },
  });
  const stats: BrokerStats = {
    connected: 0,
    connections: 0,
    handshakesRefused: 0,
    expiredCertificatesRefused: 0,
    connectsRefused: 0,
    revokedCertificatesRefused: 0,
    pendingCertificatesRefused: 0,
    connectsUnavailable: 0,
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
  let listener: MqttListener | undefined;
  const connections = new Set<GatewayConnection>();
  // Signals of every instance (DESIGN.md "Scale-out"): a deleted gateway, or one whose certificate
  // was revoked, is disconnected wherever it is connected, and a gateway that connected to another
  // instance loses its older connection here.
  const instance = randomUUID();
  /** The connection of each gateway connected here. */
  const byGateway = new Map<string, GatewayConnection>();
  let connectedSignals: ConnectedSignals | undefined;

  const host: ConnectionHost = {
    log,
    writer,
    maxPayloadBytes: MAX_PAYLOAD_BYTES,

    // Username, password and client identifier are ignored: the TLS client certificate is the
    // credential and names the session, so no gateway can take over another's ([MQTT-3.1.4-2]).
    // Its revocation is checked here, once per connection: messages are not looked at again.
    async authenticate(connection) {
      const cn = connection.commonName;
      const serial = connection.serial;
      let gateway: Awaited<ReturnType<Store['ingest']['connectingGateway']>>;
      try {
        gateway = cn ? await store.ingest.connectingGateway(cn, serial) : undefined;
      } catch (error) {
        // The store cannot answer: refuse as unavailable ([MQTT-3.2.2-5] return code 3); the gateway retries.
        stats.connectsUnavailable++;
        log.warn({ certificate_cn: cn, reason: (error as Error).message }, 'MQTT connect refused: the store cannot answer');
        return CONNACK_SERVER_UNAVAILABLE;
      }
      if (!gateway || gateway.deleted !== null) {
        stats.connectsRefused++;
        log.warn({ certificate_cn: cn, deleted: Boolean(gateway) }, 'MQTT connect refused: unknown or deleted gateway');
        return CONNACK_NOT_AUTHORIZED;
      }
      if (gateway.certificate === 'revoked') {
        stats.connectsRefused++;
        stats.revokedCertificatesRefused++;
        log.warn({ gateway_id: gateway.id, serial }, 'MQTT connect refused: the certificate was revoked');
        return CONNACK_NOT_AUTHORIZED;
      }
      // Its key went only to whoever redeems the token: before that nobody should hold it
      // (docs/gateways.md "No gateway key at rest").
      if (gateway.certificate === 'pending') {
        stats.connectsRefused++;
        stats.pendingCertificatesRefused++;
        log.warn({ gateway_id: gateway.id, serial }, 'MQTT connect refused: the certificate was never handed out (its provisioning token is not redeemed)');
        return CONNACK_NOT_AUTHORIZED;
      }
      const topic = `scanhub/${gateway.customer_id}/gateway/${gateway.id}`;
      return { gatewayId: gateway.id, topic, topicBytes: Buffer.from(topic), serial };
    },

    connected(connection) {
      // From CONNACK 0 on, the connection is a gateway's: no longer under the caps and deadlines of
      // unauthenticated connections.
      listener?.authenticated(connection.socket);
      const { gatewayId } = connection.session!;
      stats.connections++;
      stats.connected++;
      log.info({ gateway_id: gatewayId, remote: clientAddressOf(connection.socket) }, 'gateway connected');
      // [MQTT-3.1.4-2]: a second connection of the session closes the first.
      byGateway.get(gatewayId)?.close();
      byGateway.set(gatewayId, connection);
      connectedSignals?.add(gatewayId);
    },

    disconnected(connection) {
      const { gatewayId } = connection.session!;
      stats.connected--;
      log.info({ gateway_id: gatewayId }, 'gateway disconnected');
      if (byGateway.get(gatewayId) === connection) byGateway.delete(gatewayId);
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
        log.warn({ ...fields, declared_bytes: refusal.packetBytes, limit_bytes: MAX_PACKET_BYTES }, 'MQTT packet over the size limit refused, connection closed');
      } else {
        // [MQTT-4.8.0-1]: malformed; packet boundaries are lost, so nothing after it can be checked.
        log.warn(fields, 'MQTT packet with a malformed Remaining Length, connection closed');
      }
    },

    subscriptionRefused(connection, filter) {
      stats.subscriptionsRefused++;
      log.warn({ ...whoIs(connection), topic: filter }, 'MQTT subscription refused');
    },
  };

  const disconnect = (gatewayId: string, reason: string) => {
    const connection = byGateway.get(gatewayId);
    if (!connection) return;
    log.info({ gateway_id: gatewayId, reason }, 'gateway disconnected by the service');
    connection.close();
  };
  const stopSignals = store.signals.subscribe((signal) => {
    if (signal.kind === 'gateway-deleted') disconnect(signal.gateway_id, 'the gateway was deleted');
    else if (signal.kind === 'certificate-revoked') {
      if (byGateway.get(signal.gateway_id)?.session?.serial === signal.serial) disconnect(signal.gateway_id, `its certificate ${signal.serial} was revoked`);
    } else if (signal.kind === 'gateways-connected' && signal.instance !== instance) {
      for (const id of signal.gateway_ids) disconnect(id, 'the gateway connected to another instance');
    }
  });
  // Signals sent while the listener was down were not heard: look up every connected gateway again.
  const stopResume = store.signals.onResume(() => {
    for (const [id, connection] of byGateway) {
      const serial = connection.serial;
      store.ingest.connectingGateway(id, serial).then(
        (gateway) => {
          if (!gateway || gateway.deleted !== null) disconnect(id, 'the gateway was deleted');
          else if (gateway.certificate === 'revoked') disconnect(id, `its certificate ${serial} was revoked`);
        },
        () => undefined,
      );
    }
  });
  // Ready only once signals are heard (PostgreSQL: LISTEN is set up), so that a gateway deleted
  // right after start is not missed; a database that fails meanwhile shows in /healthz instead.
  await Promise.race([store.signals.listening(), new Promise((resolve) => setTimeout(resolve, SIGNALS_START_WAIT_MS).unref())]);
  connectedSignals = new ConnectedSignals(instance, store.signals, log);

  // The counters once a minute while messages arrive: enough to follow ingest from the log.
  let loggedMessages = 0;
  const statsTimer = setInterval(() => {
    if (writer.stats.messages === loggedMessages) return;
    loggedMessages = writer.stats.messages;
    log.info({ ingest: writer.stats, mqtt: stats }, 'ingest counters');
  }, 60_000).unref();

  try {
    listener = await listenMqtt({
      host: options.host,
      port: options.port,
      keyPem: certificate.keyPem,
      certPem: certificate.certPem,
      caPem: ca.certPem,
      limits: { ...DEFAULT_CONNECTION_LIMITS, ...options.limits },
      proxyProtocol: options.proxyProtocol,
      proxyTrust: options.proxyTrust,
      stats,
      log,
      onConnection(socket) {
        const connection = new GatewayConnection(socket, host, MAX_PACKET_BYTES);
        connections.add(connection);
        socket.once('close', () => connections.delete(connection));
      },
    });
  } catch (error) {
    // Port taken, address unknown: the threads must not keep the process alive.
    clearInterval(statsTimer);
    stopSignals();
    stopResume();
    connectedSignals.close();
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
      if (state === 'restarting') return { state, reason: `ingest writer restarting after: ${cause?.message}` };
      const held = writer.held();
      return held ? { state: 'not acknowledging', reason: `${held}: messages wait unacknowledged and are committed once there is space` } : undefined;
    },
    deleteEvents: (job) => writer.deleteEvents(job),
    close: () =>
      (closing ??= (async () => {
        clearInterval(statsTimer);
        stopSignals();
        stopResume();
        connectedSignals.close();
        const stopped = listener.stopAccepting();
        // Nothing new is read; what was read is committed and acknowledged before the connections close.
        for (const connection of connections) connection.stopReading();
        writer.flush();
        await writer.close();
        await closeConnections(connections, CLOSE_GRACE_MS);
        listener.destroyConnections();
        await stopped;
        log.info({ mqtt: stats }, 'MQTT broker closed');
      })()),
  };
}
