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
import { join } from 'node:path';
import { openDatabase } from '../dist/store/sqlite/open.js';
import { report } from './lib.js';
import {
  RUNS, benchGateways, cpuSince, cpuSnapshot, dropDeployment, forkGenerator, load, newDeployment, postgresPids, psql, startPostgres, startServe, summarize,
} from './stores-lib.js';

const BENCH = 'stores-ingest';
const gatewayCount = Number(process.env.BENCH_GATEWAYS ?? 200);
const window = Number(process.env.BENCH_WINDOW ?? 16);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const customer = 'bench';
const kinds = (process.env.BENCH_STORES ?? 'sqlite,postgres').split(',');

const pg = kinds.includes('postgres') ? startPostgres(BENCH) : undefined;
const active = kinds.filter((kind) => kind === 'sqlite' || pg);

/** Events stored in the deployment (counted in its database). */
function storedEvents(deployment) {
  if (deployment.kind === 'postgres') return Number(psql(deployment.url, 'SELECT count(*) FROM events'));
  const db = openDatabase(join(deployment.dataDir, 'scanhub.db'), { readonly: true });
  try {
    return db.prepare('SELECT count(*) FROM events').pluck().get();
  } finally {
    db.close();
  }
}

async function oneRun(kind) {
  const deployment = newDeployment(kind, pg, { prefix: 'ingest' });
  const server = await startServe(deployment, { customer, logLevel: 'warn' });
  try {
    const gateways = await benchGateways(deployment, customer, gatewayCount);
    const generator = forkGenerator({ host: '127.0.0.1', port: server.mqttPort }, gateways, { window, warmupSeconds, seconds });
    const { next } = generator;
    const connected = await next();
    if (connected.type !== 'connected') throw new Error(`load generator: ${JSON.stringify(connected)}`);
    const pgPids = postgresPids(pg && kind === 'postgres' ? pg : undefined);
    const serveCpu = cpuSnapshot([server.pid]);
    const pgCpu = cpuSnapshot(pgPids);
    generator.start();
    const result = await next();
    const serveMs = cpuSince(serveCpu);
    const pgMs = kind === 'postgres' ? cpuSince(pgCpu, postgresPids(pg)) : 0;
    generator.kill();
    const loadNow = load();

    const stored = storedEvents(deployment);
    if (stored !== result.acked) throw new Error(`${kind}: ${result.acked} messages acknowledged but ${stored} events stored`);
    const figures = {
      eventsPerSecond: result.ackedInWindow / (result.elapsedMs / 1000),
      p50: result.p50,
      p99: result.p99,
      serveCpuPer1000: (serveMs / result.acked) * 1000,
      postgresCpuPer1000: (pgMs / result.acked) * 1000,
    };
    console.error(
      `${BENCH}: ${kind}: ${Math.round(figures.eventsPerSecond)} events/s, PUBACK p50 ${figures.p50.toFixed(1)} ms p99 ${figures.p99.toFixed(1)} ms, ` +
        `serve ${figures.serveCpuPer1000.toFixed(1)} CPU ms/1000 events` +
        (kind === 'postgres' ? `, postgres ${figures.postgresCpuPer1000.toFixed(1)}` : '') +
        `; ${stored} stored; load ${loadNow}`,
    );
    return figures;
  } finally {
    await server.stop();
    dropDeployment(deployment);
  }
}

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
