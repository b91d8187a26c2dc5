// Issue 13: MQTT ingest on SQLite and on PostgreSQL in one run. Each run is a fresh deployment
// (a data directory, or a fresh PostgreSQL database) served by `scanhub serve` started from the
// CLI; 200 gateways (created through the store seam, certificates from the deployment's CA)
// publish QoS 1 over mutual TLS with the load generator of ingest.bench.js (bench/mqtt-load.js,
// its own process); the PUBACK comes after the commit. Runs alternate SQLite, PostgreSQL, ... so
// that both see the same machine. Per kind: events/s stored (every acknowledged message counted
// back in the database), publish-to-PUBACK p50/p99, CPU ms per 1,000 events of the serve process
// and of the PostgreSQL processes (/proc/<pid>/stat, warm-up and drain included).
// Env: BENCH_RUNS (3), BENCH_GATEWAYS (200), BENCH_WINDOW (16), BENCH_SECONDS (10),
// BENCH_WARMUP_SECONDS (3), BENCH_STORES (sqlite,postgres).
import { report } from './lib.js';
import { RUNS, ingestRun, load, startPostgres, summarize } from './stores-lib.js';

const BENCH = 'stores-ingest';
const gatewayCount = Number(process.env.BENCH_GATEWAYS ?? 200);
const window = Number(process.env.BENCH_WINDOW ?? 16);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const customer = 'bench';
const kinds = (process.env.BENCH_STORES ?? 'sqlite,postgres').split(',');

const pg = kinds.includes('postgres') ? startPostgres(BENCH) : undefined;
const active = kinds.filter((kind) => kind === 'sqlite' || pg);

const oneRun = (kind) => ingestRun(kind, pg, { bench: BENCH, customer, gatewayCount, window, seconds, warmupSeconds });

try {
  const runs = Object.fromEntries(active.map((kind) => [kind, []]));
  for (let run = 0; run < RUNS; run++) {
    for (const kind of active) runs[kind].push(await oneRun(kind));
  }
  const pick = (field) => Object.fromEntries(active.map((kind) => [kind, runs[kind].map((r) => r[field])]));
  console.error(`${BENCH}: ${gatewayCount} gateways, window ${window}, QoS 1, mTLS, ${seconds}s after ${warmupSeconds}s warm-up, ${RUNS} runs per store`);
  summarize(BENCH, 'events_per_second', 'events/s', pick('eventsPerSecond'), { target: 20_000, cmp: '>=' });
  summarize(BENCH, 'puback_p50', 'ms', pick('p50'));
  summarize(BENCH, 'puback_p99', 'ms', pick('p99'));
  summarize(BENCH, 'serve_cpu_ms_per_1000_events', 'ms', pick('serveCpuPer1000'));
  if (runs.postgres) summarize(BENCH, 'dbserver_cpu_ms_per_1000_events', 'ms', { postgres: pick('postgresCpuPer1000').postgres });
  report(BENCH, 'load_average_1m_at_end', Number(load().split(' ')[0]), 'load');
} finally {
  pg?.stop();
}
