// MQTT ingest on SQLite and on PostgreSQL in one run, alternating, each a fresh deployment
// (bench/README.md "stores-ingest, stores-events, stores-jobs"): events/s stored, PUBACK latency and
// the CPU per event of serve and of PostgreSQL.
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
