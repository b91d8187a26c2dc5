import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { BrokerStats } from '../mqtt/broker.js';
import type { IngestStats } from '../mqtt/ingest.js';
import { HANDSHAKE_REFUSALS, refusedHandshakes } from '../mqtt/refusals.js';
import type { ExportStatus, Store } from '../store/ports/index.js';

// What GET /metrics reports (docs/metrics.md has the table). Ingest and MQTT keep plain counters
// that cost one increment per message; they are read here only when Prometheus scrapes. Per
// batch (commit latency) and per HTTP request (duration) a histogram is observed directly.

/** Commits take a millisecond or a few on SQLite, more on PostgreSQL over a network: 0.5 ms to 5 s. */
const COMMIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** HTTP requests: 1 ms (a cached read) to 10 s (a large job analysis or export download). */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The longest a scrape waits for the store (export tasks, database size); past it those are left out. */
const STORE_READ_TIMEOUT_MS = 2000;

/** The route label of a request no route matched (404, 405): never the raw path, whose ids would grow the series without bound. */
export const UNMATCHED_ROUTE = 'unmatched';

const EXPORT_STATUSES: ExportStatus[] = ['PENDING', 'SUCCESSFUL', 'FAILED'];

/** The ingest counters each plain counter of IngestStats becomes, with its help text. */
const INGEST_COUNTERS: [keyof IngestStats, string, string][] = [
  ['messages', 'scanhub_ingest_messages_total', 'MQTT PUBLISH packets handed to the ingest writer.'],
  ['events', 'scanhub_ingest_events_total', 'Events stored (new ids).'],
  ['duplicates', 'scanhub_ingest_duplicate_events_total', 'Events already stored (the same customer, created and id: a QoS 1 redelivery): acknowledged, not stored again.'],
  ['invalid', 'scanhub_ingest_invalid_messages_total', 'Messages acknowledged and dropped: bad JSON, wrong field types, unknown type, over a limit.'],
  ['quarantined', 'scanhub_ingest_quarantined_messages_total', 'Messages kept as dead letters (they killed the writer thread), and copies of them, acknowledged.'],
  ['failed', 'scanhub_ingest_failed_messages_total', 'Messages not acknowledged: the commit failed or the writer was down (the gateway resends).'],
  ['reports', 'scanhub_ingest_gateway_reports_total', 'Gateway report messages that changed a gateway record.'],
  ['batches', 'scanhub_ingest_batches_total', 'Ingest transactions committed.'],
];

/** The MQTT counters and gauges read from BrokerStats. */
const BROKER_COUNTERS: [keyof BrokerStats, string, string][] = [
  ['connections', 'scanhub_mqtt_connections_accepted_total', 'MQTT connections of gateways accepted (CONNACK 0).'],
  ['publishesRefused', 'scanhub_mqtt_refused_publishes_total', 'PUBLISHes refused and their connection closed: foreign topic, payload or packet over the limit.'],
  ['subscriptionsRefused', 'scanhub_mqtt_refused_subscriptions_total', 'SUBSCRIBE topic filters refused (gateways only publish).'],
  ['protocolViolations', 'scanhub_mqtt_protocol_violations_total', 'Connections closed for a protocol violation (a QoS 1 or 2 PUBLISH with packet identifier 0).'],
];
const BROKER_GAUGES: [keyof BrokerStats, string, string][] = [
  ['connected', 'scanhub_mqtt_connections', 'MQTT connections of gateways open now.'],
  ['unauthenticated', 'scanhub_mqtt_unauthenticated_connections', 'MQTT connections accepted and not yet answered CONNACK 0, now.'],
];

/** What the broker shows of itself: its counters and those of ingest. */
export interface BrokerCounters {
  stats: BrokerStats;
  ingest: IngestStats;
}

/**
 * The metrics of one server, in a registry of its own (tests run several servers in one process):
 * ingest, MQTT, HTTP, export tasks and the database size; its exposition adds the process metrics.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private broker: BrokerCounters | undefined;
  private readonly commitDuration: Histogram;
  private readonly requestDuration: Histogram<'method' | 'route' | 'status'>;

  constructor(store: Store) {
    const registers = [this.registry];
    const metrics = this;

    for (const [field, name, help] of INGEST_COUNTERS) mirroredCounter(this.registry, name, help, () => this.broker?.ingest[field]);
    for (const [field, name, help] of BROKER_COUNTERS) mirroredCounter(this.registry, name, help, () => this.broker?.stats[field]);
    for (const [field, name, help] of BROKER_GAUGES) {
      new Gauge({ name, help, registers, collect() {
        this.set(metrics.broker?.stats[field] ?? 0);
      } });
    }
    new Counter({
      name: 'scanhub_mqtt_refused_handshakes_total',
      help: 'Connections that never became a gateway\'s, by reason (docs/metrics.md lists the reasons).',
      labelNames: ['reason'],
      registers,
      collect() {
        const refused = metrics.broker ? refusedHandshakes(metrics.broker.stats) : undefined;
        this.reset();
        for (const reason of HANDSHAKE_REFUSALS) this.inc({ reason }, refused?.[reason] ?? 0);
      },
    });
    this.commitDuration = new Histogram({
      name: 'scanhub_ingest_commit_duration_seconds',
      help: 'Seconds from handing an ingest batch to the writer thread until its result (measured in the main thread).',
      buckets: COMMIT_BUCKETS,
      registers,
    });
    this.requestDuration = new Histogram({
      name: 'scanhub_http_request_duration_seconds',
      help: `Seconds from the arrival of an HTTP request to its response, by method, route template ("${UNMATCHED_ROUTE}" when none matched) and status.`,
      labelNames: ['method', 'route', 'status'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'scanhub_export_tasks',
      help: 'Export tasks by state (read from the database at scrape time; absent when it did not answer).',
      labelNames: ['state'],
      registers,
      async collect() {
        this.reset();
        const counts = await withinTimeout(store.exportTasks.countByStatus());
        if (counts) for (const state of EXPORT_STATUSES) this.set({ state }, counts[state]);
      },
    });
    new Gauge({
      name: 'scanhub_database_size_bytes',
      help: 'Size of the database on disk: SQLite its file and WAL, PostgreSQL pg_database_size (absent when it did not answer).',
      registers,
      async collect() {
        const bytes = await withinTimeout(store.sizeBytes());
        // remove(): no sample at all (reset() would leave a 0, which is a size).
        if (bytes === undefined) this.remove();
        else this.set(bytes);
      },
    });
  }

  /** The broker's counters are reported from now on (zero until it has started). */
  watchBroker(broker: BrokerCounters): void {
    this.broker = broker;
  }

  /** For IngestOptions.onCommit: one batch's hand-over-to-result time. */
  readonly observeCommit = (seconds: number): void => this.commitDuration.observe(seconds);

  /** One HTTP request: `route` is the route's template (`/:customer_id/gateways/:gateway_id`), or UNMATCHED_ROUTE. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.requestDuration.observe({ method, route, status: String(status) }, seconds);
  }

  /** The Prometheus text exposition of everything, the process metrics included, and its Content-Type. */
  async exposition(): Promise<{ text: string; contentType: string }> {
    const all = Registry.merge([processMetrics(), this.registry]);
    return { text: await all.metrics(), contentType: all.contentType };
  }
}

let processRegistry: Registry | undefined;

/**
 * Default metrics left out: they list every libuv handle or resource (each gateway's socket) on
 * each scrape, so a scrape would block the event loop longer the more gateways are connected;
 * scanhub_mqtt_connections and process_open_fds count the same things at a fixed cost.
 */
const COSTLY_DEFAULT_METRICS = ['nodejs_active_handles', 'nodejs_active_handles_total', 'nodejs_active_resources', 'nodejs_active_resources_total'];

/**
 * prom-client's process metrics (CPU, memory, file descriptors, event loop lag, GC), in one
 * registry per process: they describe the process, not a server, and each collectDefaultMetrics
 * starts an event loop monitor and a GC observer that nothing stops (one per test server would pile up).
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
    for (const name of COSTLY_DEFAULT_METRICS) processRegistry.removeSingleMetric(name);
  }
  return processRegistry;
}

/** A counter that shows a plain number kept elsewhere (0 while there is none yet). */
function mirroredCounter(registry: Registry, name: string, help: string, read: () => number | undefined): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read() ?? 0);
    },
  });
}

/** The store's answer, or undefined when it fails or takes longer than STORE_READ_TIMEOUT_MS (PostgreSQL down). */
async function withinTimeout<T>(read: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), STORE_READ_TIMEOUT_MS);
  });
  try {
    return await Promise.race([read, timeout]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
