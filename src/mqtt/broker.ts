import { issueServerCertificate, type CertificateAuthority, type PregeneratedKeys } from '../pki/ca.js';
import { CUSTOMERS_PER_SIGNAL, type DeletedBatch, type Signal, type Store } from '../store/ports/index.js';
import type { CreatedWindow } from '../domain/payload-limits.js';
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from './admission.js';
import { logCountersWhileBusy, newBrokerStats, type BrokerStats } from './broker-stats.js';
import { CommandDelivery } from './commands/delivery.js';
import { ConnectedGateways } from './connected-gateways.js';
import { connectionHost } from './connection-host.js';
import { GatewayConnection } from './gateway-connection.js';
import type { DeletionJob, IngestThreads } from './ingest-thread.js';
import { IngestWriter, type IngestLog, type IngestStats } from './ingest.js';
import { listenMqtt, type MqttListener } from './listener.js';

/** Largest payload a gateway may publish; bigger ones close the connection. */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

/**
 * Largest MQTT packet (fixed header included) a gateway may send; the connection closes when a
 * header declares more, before the body is buffered. 64 KiB over the payload limit: room for the
 * largest topic MQTT can encode, so only the payload check decides about payload size.
 */
export const MAX_PACKET_BYTES = MAX_PAYLOAD_BYTES + 64 * 1024;

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
  /** Whether commits are to hand the events they stored to this thread (IngestOptions.handOff): the webhooks deliver some. */
  handOff?: () => boolean;
}

/** What the broker needs of the deployment: the store, the CA, where its certificate lives and the name gateways reach it by, the clock. */
export interface BrokerContext {
  store: Store;
  /** The deployment CA, which signs the broker's certificate and every gateway's. */
  ca: CertificateAuthority;
  /** What is local to this process: the broker's certificate is kept here. */
  dataDir: string;
  /** The host put into `mqtt_endpoint`: a name of the broker's certificate. */
  publicHost: string;
  clock: () => number;
}

/** At shutdown, how long connections get to take their last acknowledgements before they are cut. */
const CLOSE_GRACE_MS = 2_000;

/** Ends every connection (its unsent bytes go out first); resolves once all closed, or after `graceMs`. */
async function closeConnections(connections: Set<GatewayConnection>, graceMs: number): Promise<void> {
  const closed = [...connections].map((connection) => new Promise((resolve) => connection.socket.once('close', resolve)));
  for (const connection of connections) connection.end();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(closed), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
  clearTimeout(timer);
}

/** The ingest writer and its threads (the writer, and the store's maintenance such as SQLite's checkpointer). */
function startIngestWriter(ctx: BrokerContext, options: BrokerOptions): IngestWriter {
  const { store } = ctx;
  return new IngestWriter({
    locator: store.locator,
    maintenance: store.ingestMaintenance(),
    clock: ctx.clock,
    log: options.log,
    createdWindow: options.createdWindow,
    storage: store.storage,
    onCommit: options.onCommit,
    // SQLite: the writer thread committed, this thread's live streams and webhooks read on (within
    // the process), the webhooks from the events handed over when they asked (options.handOff).
    onUnannounced: (customers, committed) => {
      for (let i = 0; i < customers.length; i += CUSTOMERS_PER_SIGNAL) {
        const signal: Signal = { kind: 'events-committed', customers: customers.slice(i, i + CUSTOMERS_PER_SIGNAL) };
        if (i === 0 && committed) signal.committed = committed;
        store.signals.publish(signal).catch(() => undefined);
      }
    },
    handOff: options.handOff,
  });
}

/** The writer thread is gone: command and webhook writes run where they are made again. */
function dropRoutes(store: BrokerContext['store']): void {
  store.commands.routeWrites?.(undefined);
  store.webhooks.routeWrites?.(undefined);
}

/**
 * Starts the embedded broker (docs/gateways-mqtt.md "The listener"): decisions about gateways are
 * connection-host.ts's, each connection's MQTT gateway-connection.ts's, durable ingest
 * IngestWriter's.
 */
export async function startBroker(ctx: BrokerContext, options: BrokerOptions): Promise<MqttBroker> {
  const { log } = options;
  const { ca, store } = ctx;
  const certificate = issueServerCertificate(ca, ctx.dataDir, [options.host, ctx.publicHost], await options.keys?.server);
  const writer = startIngestWriter(ctx, options);
  // SQLite: the writes of command and webhook delivery run in the writer thread, between its commits (docs/commands.md, docs/webhooks.md "Delivery").
  store.commands.routeWrites?.((writes) => writer.deliveryWrites.commandWrites(writes));
  store.webhooks.routeWrites?.((writes) => writer.deliveryWrites.webhookWrites(writes));
  const stats = newBrokerStats();
  let listener: MqttListener | undefined;
  const connections = new Set<GatewayConnection>();
  const gateways = new ConnectedGateways(store, log, ctx.clock);
  const commands = new CommandDelivery(store, ctx.clock, log, stats);
  const host = connectionHost({
    log,
    stats,
    writer,
    store,
    gateways,
    commands,
    maxPayloadBytes: MAX_PAYLOAD_BYTES,
    maxPacketBytes: MAX_PACKET_BYTES,
    authenticated: (socket) => listener?.authenticated(socket),
  });
  commands.listen();
  await gateways.listen();
  const statsTimer = logCountersWhileBusy(writer.stats, stats, log);

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
    await gateways.close();
    commands.close();
    await writer.close();
    dropRoutes(store);
    throw error;
  }
  const running = listener;

  let closing: Promise<void> | undefined;
  return {
    port: running.port,
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
        const withdrawn = gateways.close();
        commands.close();
        const stopped = running.stopAccepting();
        // Nothing new is read; what was read is committed and acknowledged before the connections close.
        for (const connection of connections) connection.stopReading();
        writer.flush();
        await writer.close();
        dropRoutes(store);
        await closeConnections(connections, CLOSE_GRACE_MS);
        running.destroyConnections();
        await stopped;
        await withdrawn;
        log.info({ mqtt: stats }, 'MQTT broker closed');
      })()),
  };
}
