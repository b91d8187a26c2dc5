// Event pages and CSV exports over 10 M events on SQLite and on PostgreSQL in one run, alternating
// (bench/README.md "stores-ingest, stores-events, stores-jobs"). PostgreSQL is seeded with the same
// rows by INSERT ... SELECT FROM generate_series, indexes rebuilt after; seeding is not timed.
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'undici';
import { openDatabase } from '../dist/store/sqlite/open.js';
import { LeanHttpClient } from './http-client.js';
import { percentile, report } from './lib.js';
import { CUSTOMER, mixedPagePath, seededDataDir, warmPageCache } from './events-data.js';
import { RUNS, dropDeployment, load, login, newDeployment, psql, seedPostgresEvents, startPostgres, startServe, summarize } from './stores-lib.js';

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
const seededPostgres = () => seedPostgresEvents(pg, data, (metric, value, unit) => report(BENCH, `postgres_${metric}`, value, unit));

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
