import { Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ExportStatus, Store } from '../store/ports/index.js';

// What GET /metrics reports (docs/metrics.md has the table): the HTTP requests, export tasks and
// database size here, after what the MQTT listener registered in the same registry
// (src/mqtt/metrics.ts). Per HTTP request (duration) a histogram is observed directly.

/** HTTP requests: 1 ms (a cached read) to 10 s (a large job analysis or export download). */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The longest a scrape waits for the store (export tasks, database size); past it those are left out. */
const STORE_READ_TIMEOUT_MS = 2000;

/** The route label of a request no route matched (404, 405): never the raw path, whose ids would grow the series without bound. */
export const UNMATCHED_ROUTE = 'unmatched';

const EXPORT_STATUSES: ExportStatus[] = ['PENDING', 'SUCCESSFUL', 'FAILED'];

/**
 * The metrics of one server, in a registry of its own (tests run several servers in one process):
 * HTTP, export tasks and the database size, after those others registered there first (MQTT and
 * ingest); its exposition adds the process metrics.
 */
export class ServiceMetrics {
  private readonly requestDuration: Histogram<'method' | 'route' | 'status'>;

  constructor(
    store: Store,
    readonly registry = new Registry(),
  ) {
    const registers = [registry];

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
