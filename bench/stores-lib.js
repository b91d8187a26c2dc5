// Shared by the bench/stores-*.bench.js benchmarks (issue 13): the same figure measured on SQLite
// and on PostgreSQL in one run, with `scanhub serve` started as a process from the CLI as a user
// starts it (`--data-dir` for SQLite; `--database URL` and SCANHUB_MASTER_KEY for PostgreSQL).
// PostgreSQL is a throwaway cluster of scripts/postgres.sh (started here, stopped at exit), one
// fresh database per deployment. When no server can be started, the PostgreSQL side is skipped
// with a printed reason (and the SQLite side still runs).
import { execFileSync, fork, spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { openStore } from '../dist/store/open.js';
import { openDatabase } from '../dist/store/sqlite/open.js';
import { issueClientCertificateAsync, loadOrCreateCa, randomSerialHex } from '../dist/pki/ca.js';
import { api, percentile, report } from './lib.js';
import { EVENT_COLUMNS_SQL, eventValuesSql } from './events-data.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// BENCH_SERVE_BIN: another build's bin/scanhub.js to serve (the same figures for an older commit, side by side).
const BIN = process.env.BENCH_SERVE_BIN ?? join(ROOT, 'bin', 'scanhub.js');
export const RUNS = Number(process.env.BENCH_RUNS ?? 3);
export const ADMIN_EMAIL = 'admin@bench.local';
export const ADMIN_PASSWORD = 'bench-password-123';
const CLOCK_TICKS = 100; // USER_HZ of /proc/<pid>/stat on Linux

/** The machine's load averages as a string, recorded beside every figure (other agents share the machine). */
export function load() {
  return loadavg().map((l) => l.toFixed(2)).join(' ');
}

/**
 * A throwaway PostgreSQL cluster (scripts/postgres.sh start), or undefined with the reason printed.
 * BENCH_POSTGRES_URL uses a running server instead (databases are created in it).
 */
export function startPostgres(bench) {
  if (process.env.BENCH_POSTGRES_URL) return { url: process.env.BENCH_POSTGRES_URL, stop() {} };
  const result = spawnSync('bash', [join(ROOT, 'scripts', 'postgres.sh'), 'start'], { encoding: 'utf8' });
  if (result.status !== 0) {
    console.error(`${bench}: PostgreSQL side skipped: no PostgreSQL server could be started (scripts/postgres.sh start: ${(result.stderr || result.error?.message || '').trim()})`);
    return undefined;
  }
  const url = /SCANHUB_TEST_DATABASE_URL='([^']+)'/.exec(result.stdout)[1];
  const dir = /SCANHUB_TEST_POSTGRES_DIR='([^']+)'/.exec(result.stdout)[1];
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    spawnSync('bash', [join(ROOT, 'scripts', 'postgres.sh'), 'stop', dir], { stdio: 'ignore' });
  };
  process.once('exit', stop);
  return { url, dir, stop };
}

/** Runs SQL through psql on the server's database `database`; its stdout (tuples only, unaligned). */
export function psql(url, sql, database) {
  const target = database ? withDatabase(url, database) : url;
  return execFileSync('psql', ['-X', '-q', '-t', '-A', '-v', 'ON_ERROR_STOP=1', '-d', target, '-c', sql], { encoding: 'utf8', maxBuffer: 64 << 20 }).trim();
}

/** The connection string with another database name. */
export function withDatabase(url, database) {
  // Not `new URL`: a socket-directory URL (postgresql://user@/db?host=/dir) has no host to parse.
  const match = /^(postgres(?:ql)?:\/\/[^/?]*)(\/[^?]*)?(\?.*)?$/i.exec(url);
  if (!match) throw new Error(`not a PostgreSQL URL: ${url}`);
  return `${match[1]}/${database}${match[3] ?? ''}`;
}

/** The pids of the cluster's processes: the postmaster (first line of postmaster.pid) and its children. */
export function postgresPids(pg) {
  if (!pg?.dir) return [];
  const master = Number(readFileSync(join(pg.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const pids = [master];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === master) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** CPU ms (user + system) a process has used so far, from /proc/<pid>/stat; 0 when it is gone. */
export function cpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** CPU ms per pid, for a later `cpuSince`. */
export function cpuSnapshot(pids) {
  return new Map(pids.map((pid) => [pid, cpuMs(pid)]));
}

/** CPU ms used since the snapshot by its processes and by the given new ones (counted from 0). */
export function cpuSince(snapshot, pids = [...snapshot.keys()]) {
  let total = 0;
  for (const pid of new Set([...snapshot.keys(), ...pids])) total += cpuMs(pid) - (snapshot.get(pid) ?? 0);
  return total;
}

/**
 * A deployment of one kind: SQLite in a fresh data directory, or a fresh PostgreSQL database
 * (files in a fresh data directory too). `dataDir` may name an existing SQLite data directory.
 */
export function newDeployment(kind, pg, { dataDir, prefix = 'stores' } = {}) {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), `scanhub-bench-${prefix}-${kind}-`));
  if (kind === 'sqlite') return { kind, dataDir: dir, locator: { kind: 'sqlite', file: join(dir, 'scanhub.db'), dataDir: dir }, owned: !dataDir };
  const database = `bench_${prefix}_${randomUUID().slice(0, 8)}`;
  psql(pg.url, `CREATE DATABASE ${database}`);
  const url = withDatabase(pg.url, database);
  const masterKey = randomBytes(32).toString('base64');
  return { kind, dataDir: dir, database, url, masterKey, pg, locator: { kind: 'postgres', url, masterKey: new Uint8Array(Buffer.from(masterKey, 'base64')) }, owned: !dataDir };
}

/** Removes what the deployment created (its data directory when made here, its database). */
export function dropDeployment(deployment) {
  if (deployment.owned) rmSync(deployment.dataDir, { recursive: true, force: true });
  if (deployment.kind === 'postgres') psql(deployment.pg.url, `DROP DATABASE IF EXISTS ${deployment.database} WITH (FORCE)`);
}

/**
 * `scanhub serve` over the deployment as its own process; resolves once it listens, with its URL,
 * MQTT port and pid. `onLog` receives each JSON log line of its stdout. `args` come after the
 * defaults (a later flag wins); `dataDir` is another instance's own directory on one database;
 * `bin` another build's bin/scanhub.js; `nodeArgs` go to node itself (e.g. --cpu-prof; default BENCH_SERVE_NODE_ARGS, split at spaces).
 */
export async function startServe(
  deployment,
  { customer, onLog = () => {}, logLevel = 'info', args: extraArgs = [], env: extraEnv = {}, dataDir = deployment.dataDir, bin = BIN, nodeArgs = (process.env.BENCH_SERVE_NODE_ARGS ?? '').split(' ').filter(Boolean) } = {},
) {
  const args = [...nodeArgs, bin, 'serve', '--data-dir', dataDir, '--port', '0', '--mqtt-port', '0', '--mqtt-public-host', 'localhost', ...extraArgs];
  const env = {
    ...process.env,
    ...extraEnv,
    SCANHUB_LOG_LEVEL: logLevel,
    SCANHUB_CUSTOMER_ID: customer,
    SCANHUB_ADMIN_EMAIL: ADMIN_EMAIL,
    SCANHUB_ADMIN_PASSWORD: ADMIN_PASSWORD,
  };
  delete env.SCANHUB_DATABASE_URL;
  if (deployment.kind === 'postgres') {
    args.push('--database', deployment.url);
    env.SCANHUB_MASTER_KEY = deployment.masterKey;
  }
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let partial = '';
  child.stdout.on('data', (chunk) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop();
    for (const line of lines) {
      try {
        onLog(JSON.parse(line));
      } catch {
        // not a log line
      }
    }
  });
  const [url, mqttPort] = await new Promise((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`serve did not start in 60 s: ${stderr}`))), 60_000);
    child.stderr.on('data', (chunk) => {
      stderr += chunk.toString();
      const match = /serving (http:\/\/\S+?) \(MQTT over TLS on port (\d+)\)/.exec(stderr);
      if (match) clearTimeout(timer), resolve([match[1], Number(match[2])]);
    });
    child.on('exit', (code) => (clearTimeout(timer), reject(new Error(`serve exited with ${code}: ${stderr}`))));
  });
  return {
    url,
    mqttPort,
    pid: child.pid,
    /** kill -9; resolves once the process is gone. */
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.on('exit', resolve));
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(timer);
    },
  };
}

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

/**
 * One ingest run on a fresh deployment of the kind (stores-ingest.bench.js): `serve` (`bin`, by
 * default this build's) started from the CLI, `gatewayCount` gateways publishing QoS 1 for
 * `seconds` after `warmupSeconds`; events/s stored (counted back), PUBACK p50/p99, CPU ms per
 * 1,000 events of serve and of PostgreSQL. `label` names the run on stderr (default: the kind).
 * `during(server, generator)`, if given, starts work beside the load and returns what stops it (its result is `beside`).
 */
export async function ingestRun(kind, pg, { bench, customer, gatewayCount, window, seconds, warmupSeconds, bin, label = kind, during, before, serveArgs = [] }) {
  const deployment = newDeployment(kind, pg, { prefix: 'ingest' });
  const server = await startServe(deployment, { customer, logLevel: 'warn', bin, args: serveArgs });
  try {
    const gateways = await benchGateways(deployment, customer, gatewayCount);
    const generator = forkGenerator({ host: '127.0.0.1', port: server.mqttPort }, gateways, { window, warmupSeconds, seconds });
    const { next } = generator;
    const connected = await next();
    if (connected.type !== 'connected') throw new Error(`load generator: ${JSON.stringify(connected)}`);
    // Set-up the load needs in place first (webhooks-ingest: the webhooks).
    await before?.(server);
    const pgPids = postgresPids(pg && kind === 'postgres' ? pg : undefined);
    const serveCpu = cpuSnapshot([server.pid]);
    const pgCpu = cpuSnapshot(pgPids);
    generator.start();
    // Work beside the load (metrics-ingest: scraping /metrics): started with it, stopped after it.
    const beside = during?.(server, generator);
    const result = await next();
    const besideResult = await beside?.();
    const serveMs = cpuSince(serveCpu);
    const pgMs = kind === 'postgres' ? cpuSince(pgCpu, postgresPids(pg)) : 0;
    generator.kill();
    const loadNow = load();

    const stored = storedEvents(deployment);
    if (stored !== result.acked) throw new Error(`${label}: ${result.acked} messages acknowledged but ${stored} events stored`);
    const figures = {
      eventsPerSecond: result.ackedInWindow / (result.elapsedMs / 1000),
      p50: result.p50,
      p99: result.p99,
      serveCpuPer1000: (serveMs / result.acked) * 1000,
      postgresCpuPer1000: (pgMs / result.acked) * 1000,
      acked: result.acked,
      beside: besideResult,
    };
    console.error(
      `${bench}: ${label}: ${Math.round(figures.eventsPerSecond)} events/s, PUBACK p50 ${figures.p50.toFixed(1)} ms p99 ${figures.p99.toFixed(1)} ms, ` +
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


/**
 * A fresh PostgreSQL deployment with the rows of events-data.js's SQLite seeding (`data`: its
 * marker): same customer, gateways, times and shapes, random UUIDs; one INSERT ... SELECT FROM
 * generate_series per 2 M rows with the indexes dropped and rebuilt after, then VACUUM ANALYZE.
 * `onFigure(metric, value, unit)` gets the seeding times.
 */
export async function seedPostgresEvents(pg, data, onFigure = () => {}) {
  const CUSTOMER = data.customer;
  const deployment = newDeployment('postgres', pg, { prefix: 'events' });
  const server = await startServe(deployment, { customer: CUSTOMER, logLevel: 'warn' }); // creates the customer and administrator
  await server.stop();
  const started = performance.now();
  const { events, start: T0, end } = data;
  const SPAN = end - T0;
  const indexes = psql(deployment.url, "SELECT indexdef FROM pg_indexes WHERE tablename = 'events'").split('\n').filter(Boolean);
  const names = psql(deployment.url, "SELECT indexname FROM pg_indexes WHERE tablename = 'events'").split('\n').filter(Boolean);
  const gatewayArray = `ARRAY[${data.gateways.map((g) => `'${g}'`).join(',')}]`;
  if (pg.dir) {
    // Our own throwaway cluster: fewer checkpoints while loading (not done to a server given by BENCH_POSTGRES_URL).
    psql(deployment.url, "ALTER SYSTEM SET max_wal_size = '16GB'");
    psql(deployment.url, 'SELECT pg_reload_conf()');
  }
  // One statement per 2 M rows: the same values as events-data.js's SQLite seeding.
  psql(deployment.url, names.map((n) => `DROP INDEX ${n};`).join(' '));
  const BATCH = 2_000_000;
  for (let from = 0; from < events; from += BATCH) {
    const to = Math.min(events, from + BATCH);
    psql(
      deployment.url,
      `SET synchronous_commit = off;
      INSERT INTO events (${EVENT_COLUMNS_SQL})
      SELECT '${CUSTOMER}', gen_random_uuid()::text,
        ${eventValuesSql({ events, start: T0, span: SPAN, gateways: data.gateways.length, gatewayId: `(${gatewayArray})[1 + i % ${data.gateways.length}]` })}
      FROM generate_series(${from}::bigint, ${to - 1}::bigint) AS i`,
    );
  }
  const inserted = performance.now();
  for (const sql of indexes) psql(deployment.url, `SET maintenance_work_mem = '1GB'; ${sql}`);
  psql(deployment.url, 'VACUUM ANALYZE events');
  psql(deployment.url, 'CHECKPOINT');
  const count = Number(psql(deployment.url, 'SELECT count(*) FROM events'));
  if (count !== events) throw new Error(`PostgreSQL seeded ${count} events, expected ${events}`);
  onFigure('seed_seconds', (performance.now() - started) / 1000, 's');
  onFigure('seed_index_seconds', (performance.now() - inserted) / 1000, 's');
  return deployment;
}

/** Starts serve once so that it creates the customer, its administrator and the keys; stops it. */
export async function bootstrap(deployment, customer) {
  const server = await startServe(deployment, { customer, logLevel: 'warn' });
  await server.stop();
}

/** Opens the deployment's store in this process (the CLI's own seam), runs `work(store)`, closes it. */
export async function withStore(deployment, work, purpose = 'server') {
  const store = await openStore(deployment.locator, purpose);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** The deployment's CA (through the store's secrets, as serve loads it). */
export function deploymentCa(store) {
  return loadOrCreateCa(store.secrets);
}

/**
 * `count` gateways of the customer created through the store seam, named `<prefix>-<i>`, each with
 * a client certificate from the deployment CA: `{ ca, list: [{ id, topic, keyPem, certPem }] }`.
 */
export async function benchGateways(deployment, customer, count, prefix = 'bench') {
  return withStore(deployment, async (store) => {
    const ca = await deploymentCa(store);
    const fresh = Array.from({ length: count }, (_, i) => ({ id: randomUUID(), name: `${prefix}-${i}`, usecase: 'picking', station: `station-${i % 10}` }));
    await store.gateways.createAll(customer, fresh, Date.now());
    const list = await Promise.all(
      fresh.map(async ({ id }) => {
        const issued = await issueClientCertificateAsync(ca, id, randomSerialHex());
        return { id, topic: `scanhub/${customer}/gateway/${id}`, keyPem: issued.keyPem, certPem: issued.certPem };
      }),
    );
    return { ca, list };
  });
}

/**
 * The load generator (bench/mqtt-load.js) in its own process, each of the gateways (benchGateways)
 * publishing one event per QoS 1 message to `target` ({ host, port }) with `window` in flight:
 * `next()` resolves with each message it sends back ('connected', then the results after `start()`),
 * `mark()` with its counts at that moment.
 */
export function forkGenerator(target, gateways, { window, warmupSeconds, seconds }) {
  const config = {
    ...target,
    caPem: gateways.ca.certPem,
    gateways: gateways.list,
    window,
    eventsPerMessage: 1,
    warmupMs: warmupSeconds * 1000,
    durationMs: seconds * 1000,
    // BENCH_INGEST_RATE (events/s): a steady load below the maximum, so that two builds' CPU per event compare at the same commit sizes.
    rate: Number(process.env.BENCH_INGEST_RATE ?? 0),
  };
  const generator = fork(new URL('./mqtt-load.js', import.meta.url), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const messages = [];
  let waiting;
  // acked(): asked beside next(); once the result came (the generator then leaves), its count.
  const ackedAsked = [];
  let final;
  // A generator that leaves before its result (mqtt-load.js says why on stderr) fails the run instead of leaving it waiting.
  let exited;
  generator.on('exit', (code, signal) => {
    if (final !== undefined) return;
    exited = new Error(`the load generator exited (${signal ?? code}) before its result`);
    waiting?.reject(exited);
    ackedAsked.splice(0).forEach(({ reject }) => reject(exited));
  });
  generator.on('message', (m) => {
    if (m.type === 'result') (final = m.acked), ackedAsked.splice(0).forEach(({ resolve }) => resolve(final));
    if (m.type === 'acked') ackedAsked.shift()?.resolve(m.acked);
    else if (waiting) waiting.resolve(m), (waiting = undefined);
    else messages.push(m);
  });
  generator.send(config);
  const next = () =>
    messages.length ? Promise.resolve(messages.shift()) : exited ? Promise.reject(exited) : new Promise((resolve, reject) => (waiting = { resolve, reject }));
  return {
    pid: generator.pid,
    next,
    start: () => generator.send('start'),
    /** After start(): acknowledgements so far and the PUBACK p50/p99/max since the previous mark. */
    mark: () => (generator.send('mark'), next()),
    /** After start(): the acknowledgements so far, beside next() (nothing else reset). */
    acked: () =>
      final !== undefined ? Promise.resolve(final) : exited ? Promise.reject(exited) : new Promise((resolve, reject) => (ackedAsked.push({ resolve, reject }), generator.send('acked'))),
    kill: () => generator.kill(),
  };
}

/** Logs in as the bench administrator; the IdToken. */
export async function login(url) {
  const response = await request(`${url}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
  });
  const body = await response.body.json();
  if (!body.id_token) throw new Error(`login: ${response.statusCode} ${JSON.stringify(body)}`);
  return body.id_token;
}

/**
 * Min / median / max of each kind's runs, reported as JSON lines (`<metric>_min` ...), and the
 * PostgreSQL/SQLite ratio of the medians. `target`/`cmp` apply to the median of PostgreSQL and SQLite.
 */
export function summarize(bench, metric, unit, byKind, { target, cmp = '<=' } = {}) {
  const medians = {};
  for (const [kind, values] of Object.entries(byKind)) {
    if (values.length === 0) continue;
    const median = percentile(values, 50);
    medians[kind] = median;
    report(bench, `${kind}_${metric}_min`, Math.min(...values), unit);
    report(bench, `${kind}_${metric}_median`, median, unit, target, cmp);
    report(bench, `${kind}_${metric}_max`, Math.max(...values), unit);
  }
  if (medians.sqlite && medians.postgres) report(bench, `${metric}_ratio_postgres_to_sqlite`, medians.postgres / medians.sqlite, 'x');
  console.error(
    `${bench} ${metric} (${unit}): ` +
      Object.entries(byKind)
        .map(([kind, values]) => `${kind} [${values.map((v) => Math.round(v * 1000) / 1000).join(', ')}]`)
        .join('; ') +
      `; load ${load()}`,
  );
}

/** The load of an ingest run from the environment (BENCH_GATEWAYS 200, BENCH_WINDOW 16, BENCH_SECONDS 10, BENCH_WARMUP_SECONDS 3). */
export function ingestSettings(bench) {
  return {
    bench,
    customer: 'bench',
    gatewayCount: Number(process.env.BENCH_GATEWAYS ?? 200),
    window: Number(process.env.BENCH_WINDOW ?? 16),
    seconds: Number(process.env.BENCH_SECONDS ?? 10),
    warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 3),
  };
}

/**
 * Ingest of this build against a base build (BENCH_BASE_BIN), RUNS pairs per store (base, this;
 * this, base; ...) of BENCH_STORES (default sqlite): min / median / max of each, the ratio of
 * the medians (target `this/base >= 0.97`) and each build's spread. `thisRun(kind, pg)` measures
 * this build and returns its events/s. Without BENCH_BASE_BIN it says so and measures nothing.
 */
export async function againstBase(bench, name, thisRun, why) {
  const baseBin = process.env.BENCH_BASE_BIN;
  if (!baseBin) {
    console.error(`${bench}: skipped: set BENCH_BASE_BIN to the bin/scanhub.js of a build ${why}`);
    return;
  }
  const kinds = (process.env.BENCH_STORES ?? 'sqlite').split(',');
  const settings = ingestSettings(bench);
  const pg = kinds.includes('postgres') ? startPostgres(bench) : undefined;
  try {
    for (const kind of kinds.filter((k) => k === 'sqlite' || pg)) {
      const runs = { base: [], [name]: [] };
      const base = async () => runs.base.push((await ingestRun(kind, pg, { ...settings, bin: baseBin, label: `${kind} base` })).eventsPerSecond);
      const mine = async () => runs[name].push(await thisRun(kind, pg, { ...settings, label: `${kind} ${name}` }));
      // Each pair in the other order (base, this; this, base; ...): a run that leaves work behind
      // (the kernel writing back its database) would otherwise always slow the same build.
      for (let run = 0; run < RUNS; run++) {
        for (const measure of run % 2 === 0 ? [base, mine] : [mine, base]) await measure();
      }
      summarize(bench, `${kind}_events_per_second`, 'events/s', runs);
      const median = (values) => percentile(values, 50);
      report(bench, `${kind}_events_per_second_ratio_${name}_to_base`, median(runs[name]) / median(runs.base), 'x', 0.97, '>=');
      for (const [build, values] of Object.entries(runs)) {
        report(bench, `${kind}_${build}_spread`, (Math.max(...values) - Math.min(...values)) / median(values), 'x');
      }
    }
    report(bench, 'load_average_1m_at_end', Number(load().split(' ')[0]), 'load');
  } finally {
    pg?.stop();
  }
}

/**
 * `count` gateways of the customer created, prepared and provisioned through the API as a
 * technician and the devices would (16 calls at a time); each with the PKCS#12 it was given:
 * `[{ id, topic, pfx }]`. `serve` needs a raised --provisioning-rate-limit for this.
 */
export async function provisionGateways(bench, url, token, customer, count, prefix) {
  const list = new Array(count);
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const gateway = await api(url, 'POST', `/${customer}/gateways`, token, { name: `${prefix}-${i}`, usecase: 'picking', station: `station-${i % 10}` });
      const { token: provisioningToken } = await api(url, 'POST', `/${customer}/gateways/${gateway.id}/prepare-provisioning`, token);
      const { pkcs12 } = await api(url, 'POST', '/provisioning', undefined, { token: provisioningToken });
      list[i] = { id: gateway.id, topic: `scanhub/${customer}/gateway/${gateway.id}`, pfx: pkcs12 };
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  console.error(`${bench}: provisioned ${count} gateways through the API in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return list;
}
