// Issue 13: over the 10 M-event data set of events.bench.js (BENCH_EVENTS), on SQLite and on
// PostgreSQL in one run, each served by `scanhub serve` started from the CLI:
//  - 500-event pages of GET /{customer}/events (random one-day windows, two in three following
//    links.next; the lean client of events.bench.js, one keep-alive connection): p50 / p99;
//  - CSV export through the export task API (POST .../events/export/tasks, polled until done) of
//    BENCH_EXPORT_DAYS (7) days: rows/s from the server's "export written" log line (target
//    >= 150,000 rows/s) and end to end.
// Each store: BENCH_RUNS (3) runs of each figure, alternating between the stores.
// SQLite: the cached data directory of events-data.js. PostgreSQL: a fresh database seeded with the
// same rows (same customer, gateways, times, shapes; random UUIDs) by one INSERT ... SELECT FROM
// generate_series with the indexes dropped and rebuilt after, then VACUUM ANALYZE. Seeding is not timed.
// Env: BENCH_EVENTS (10,000,000), BENCH_SAMPLES (600), BENCH_WARMUP (100), BENCH_EXPORT_DAYS (7),
// BENCH_RUNS (3), BENCH_STORES (sqlite,postgres).
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'undici';
import { openDatabase } from '../dist/store/sqlite/open.js';
import { LeanHttpClient } from './http-client.js';
import { percentile, report } from './lib.js';
import { CUSTOMER, mixedPagePath, seededDataDir, warmPageCache } from './events-data.js';
import { RUNS, dropDeployment, load, login, newDeployment, psql, startPostgres, startServe, summarize } from './stores-lib.js';

const BENCH = 'stores-events';
const DAY = 24 * 3600 * 1000;
const samples = Number(process.env.BENCH_SAMPLES ?? 600);
const warmup = Number(process.env.BENCH_WARMUP ?? 100);
const days = Number(process.env.BENCH_EXPORT_DAYS ?? 7);
const kinds = (process.env.BENCH_STORES ?? 'sqlite,postgres').split(',');
const pg = kinds.includes('postgres') ? startPostgres(BENCH) : undefined;
const active = kinds.filter((kind) => kind === 'sqlite' || pg);

// The SQLite data set (seeded and cached by events-data.js) also fixes what PostgreSQL gets.
const data = await seededDataDir((metric, value, unit) => report(BENCH, `sqlite_${metric}`, value, unit));
report(BENCH, 'events_stored', data.events, 'events');

/** A fresh PostgreSQL deployment with the rows of events-data.js's seeding. */
async function seededPostgres() {
  const deployment = newDeployment('postgres', pg, { prefix: 'events' });
  const server = await startServe(deployment, { customer: CUSTOMER, logLevel: 'warn' }); // creates the customer and administrator
  await server.stop();
  const started = performance.now();
  const { events, start: T0, end } = data;
  const SPAN = end - T0;
  const indexes = psql(deployment.url, "SELECT indexdef FROM pg_indexes WHERE tablename = 'events' AND indexname <> 'events_pkey'").split('\n').filter(Boolean);
  const names = psql(deployment.url, "SELECT indexname FROM pg_indexes WHERE tablename = 'events' AND indexname <> 'events_pkey'").split('\n').filter(Boolean);
  const gatewayArray = `ARRAY[${data.gateways.map((g) => `'${g}'`).join(',')}]`;
  if (pg.dir) {
    // Our own throwaway cluster: fewer checkpoints while loading (not done to a server given by BENCH_POSTGRES_URL).
    psql(deployment.url, "ALTER SYSTEM SET max_wal_size = '16GB'");
    psql(deployment.url, 'SELECT pg_reload_conf()');
  }
  // One statement per 2 M rows: the same values as events-data.js's SQLite seeding.
  psql(deployment.url, `ALTER TABLE events DROP CONSTRAINT events_pkey; ${names.map((n) => `DROP INDEX ${n};`).join(' ')}`);
  const BATCH = 2_000_000;
  for (let from = 0; from < events; from += BATCH) {
    const to = Math.min(events, from + BATCH);
    psql(
      deployment.url,
      `SET synchronous_commit = off;
      INSERT INTO events (customer_id, id, class, type, created, scan_code, scan_duration, scan_decode_symbology, device_id,
        device_battery, device_firmware, device_temperature, gateway_id, gateway_usecase, gateway_station, metrics_worker_steps)
      SELECT '${CUSTOMER}', gen_random_uuid()::text, 'event',
        CASE WHEN i % 10 = 0 THEN 'telemetry' ELSE 'scan' END,
        ${T0} + i * ${SPAN} / ${events},
        CASE WHEN i % 10 = 0 THEN NULL ELSE '40063813' || (10000 + i % 90000) END,
        CASE WHEN i % 10 = 0 THEN NULL ELSE 80 + i % 100 END,
        CASE WHEN i % 10 = 0 THEN NULL ELSE 'EAN_13' END,
        'M001-' || (100000 + i % 400),
        CASE WHEN i % 10 = 0 THEN 20 + i % 80 ELSE NULL END,
        '2.4.1',
        CASE WHEN i % 10 = 0 THEN 25.5 + i % 10 ELSE NULL END,
        (${gatewayArray})[1 + i % ${data.gateways.length}], 'picking', 'Station ' || (i % ${data.gateways.length}),
        CASE WHEN i % 10 = 0 THEN i % 5000 ELSE NULL END
      FROM generate_series(${from}::bigint, ${to - 1}::bigint) AS i`,
    );
  }
  const inserted = performance.now();
  psql(deployment.url, `SET maintenance_work_mem = '1GB'; ALTER TABLE events ADD PRIMARY KEY (id)`);
  for (const sql of indexes) psql(deployment.url, `SET maintenance_work_mem = '1GB'; ${sql}`);
  psql(deployment.url, 'VACUUM ANALYZE events');
  psql(deployment.url, 'CHECKPOINT');
  const count = Number(psql(deployment.url, 'SELECT count(*) FROM events'));
  if (count !== events) throw new Error(`PostgreSQL seeded ${count} events, expected ${events}`);
  report(BENCH, 'postgres_seed_seconds', (performance.now() - started) / 1000, 's');
  report(BENCH, 'postgres_seed_index_seconds', (performance.now() - inserted) / 1000, 's');
  return deployment;
}

function countRows(deployment, from, to) {
  if (deployment.kind === 'postgres') {
    return Number(psql(deployment.url, `SELECT count(*) FROM events WHERE customer_id = '${CUSTOMER}' AND created >= ${from} AND created < ${to}`));
  }
  const db = openDatabase(join(deployment.dataDir, 'scanhub.db'), { readonly: true });
  try {
    return db.prepare('SELECT count(*) FROM events WHERE customer_id = ? AND created >= ? AND created < ?').pluck().get(CUSTOMER, from, to);
  } finally {
    db.close();
  }
}

/**
 * `warmup + samples` 500-event pages on a fresh keep-alive connection (the server closes idle
 * ones while the other store is measured); the measured latencies (ms).
 */
async function pages(side) {
  side.lean = await LeanHttpClient.connect(side.server.url);
  try {
    return await pagesOn(side);
  } finally {
    side.lean.close();
  }
}

async function pagesOn(side) {
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const latencies = [];
  let next;
  for (let i = 0; i < warmup + samples; i++) {
    const path = mixedPagePath(data, i, next, random);
    const started = performance.now();
    const response = await side.lean.get(path, side.headers);
    const ms = performance.now() - started;
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${response.tail}`);
    const size = /"metadata":\{.*"size":(\d+)/.exec(response.tail)?.[1];
    if (size !== '500') throw new Error(`${side.kind} ${path}: page of ${size} items`);
    next = /"links":\{"next":"([^"]+)"\}/.exec(response.tail)?.[1];
    if (i >= warmup) latencies.push(ms);
  }
  return latencies;
}

/** One export task of `days` days; rows/s by the server's log and end to end. */
async function exportTask(side, run) {
  const start = data.start + DAY * (1 + run);
  const end = start + days * DAY;
  const rows = countRows(side.deployment, start, end);
  const call = async (method, path) => {
    const response = await side.client.request({ method, path, headers: side.headers });
    const body = await response.body.json();
    if (response.statusCode >= 300) throw new Error(`${method} ${path}: ${response.statusCode} ${JSON.stringify(body)}`);
    return body;
  };
  const began = performance.now();
  const { task } = await call('POST', `/${CUSTOMER}/events/export/tasks?start_time_millis=${start}&end_time_millis=${end}`);
  let state;
  do {
    await new Promise((resolve) => setTimeout(resolve, 50));
    state = await call('GET', `/${CUSTOMER}/events/export/tasks/${task}`);
  } while (!state.completed);
  const seconds = (performance.now() - began) / 1000;
  if (state.status !== 'SUCCESSFUL') throw new Error(`${side.kind}: export task ended ${state.status}`);
  for (let i = 0; i < 100 && !side.written.some((line) => line.task === task); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  const log = side.written.find((line) => line.task === task);
  if (log.rows !== rows) throw new Error(`${side.kind}: exported ${log.rows} rows, expected ${rows}`);
  const file = join(side.deployment.dataDir, 'exports', `${task}.csv`);
  const mb = statSync(file).size / 1048576;
  for (const name of readdirSync(join(side.deployment.dataDir, 'exports'))) rmSync(join(side.deployment.dataDir, 'exports', name), { force: true });
  return { rows, rate: rows / (log.ms / 1000), endToEnd: rows / seconds, mb };
}

const sides = {};
try {
  // Seed first, then start the servers: a connection must not sit idle through the seeding.
  const deployments = {};
  for (const kind of active) deployments[kind] = kind === 'sqlite' ? newDeployment('sqlite', pg, { dataDir: data.dataDir }) : await seededPostgres();
  // PostgreSQL's seeding pushes the SQLite file out of the page cache: read it in again.
  if (deployments.postgres) report(BENCH, 'sqlite_page_cache_rewarm_read', warmPageCache(data.dataDir), 's');
  for (const kind of active) {
    const deployment = deployments[kind];
    const written = [];
    const server = await startServe(deployment, { customer: CUSTOMER, onLog: (line) => line.msg === 'export written' && written.push(line) });
    const token = await login(server.url);
    sides[kind] = {
      kind, deployment, server, written,
      headers: { authorization: `Bearer ${token}` },
      client: new Client(server.url),
    };
  }
  const figures = Object.fromEntries(active.map((kind) => [kind, { p50: [], p99: [], rate: [], endToEnd: [] }]));
  for (let run = 0; run < RUNS; run++) {
    for (const kind of active) {
      const latencies = await pages(sides[kind]);
      const p50 = percentile(latencies, 50);
      const p99 = percentile(latencies, 99);
      figures[kind].p50.push(p50);
      figures[kind].p99.push(p99);
      console.error(`${BENCH}: ${kind}: ${data.events} events, 500-event page p50 ${p50.toFixed(2)} ms p99 ${p99.toFixed(2)} ms; load ${load()}`);
    }
  }
  for (let run = 0; run < RUNS; run++) {
    for (const kind of active) {
      const result = await exportTask(sides[kind], run);
      figures[kind].rate.push(result.rate);
      figures[kind].endToEnd.push(result.endToEnd);
      console.error(
        `${BENCH}: ${kind}: export of ${result.rows} rows (${result.mb.toFixed(0)} MB): ${Math.round(result.rate)} rows/s, ${Math.round(result.endToEnd)} end to end; load ${load()}`,
      );
    }
  }
  const pick = (field) => Object.fromEntries(active.map((kind) => [kind, figures[kind][field]]));
  summarize(BENCH, 'page_500_p50', 'ms', pick('p50'));
  summarize(BENCH, 'page_500_p99', 'ms', pick('p99'));
  summarize(BENCH, 'export_rows_per_second', 'rows/s', pick('rate'), { target: 150_000, cmp: '>=' });
  summarize(BENCH, 'export_rows_per_second_end_to_end', 'rows/s', pick('endToEnd'));
  report(BENCH, 'load_average_1m_at_end', Number(load().split(' ')[0]), 'load');
} finally {
  for (const side of Object.values(sides)) {
    await side.client.close();
    await side.server.stop();
  }
  if (sides.postgres) dropDeployment(sides.postgres.deployment);
  pg?.stop();
}
