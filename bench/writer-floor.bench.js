// The SQLite ingest writer alone, without MQTT, TLS or a network (bench/README.md "writer-floor"):
// events/s one thread commits as the writer thread does, beside variants that tell SQLite's own cost
// and each index's, each round on a fresh copy of one seeded database with the real checkpointer.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { openDatabase } from '../dist/store/sqlite/open.js';
import { tuneForIngest } from '../dist/store/sqlite/ingest.js';
import { createCommitter } from '../dist/store/sqlite/ingest-commit.js';
import { INSERT_EVENT_SQL } from '../dist/store/sqlite/event-rows.js';
import { COLUMN, parsePayload } from '../dist/domain/payload.js';
import { sqliteEventSeeder } from './events-data.js';
import { median, report } from './lib.js';

const BENCH = 'writer-floor';
const SEED = Number(process.env.BENCH_SEED ?? 1_000_000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 300_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 2_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CACHE_MB = Number(process.env.BENCH_CACHE_MB ?? 0);
const VARIANTS = process.env.BENCH_VARIANTS?.split(',');
const PAGE_SIZE = Number(process.env.BENCH_PAGE_SIZE ?? 0);
const GATEWAYS = 200;
const CUSTOMER = 'bench';
// The writer's own checkpoint limit, as serve sets it (src/store/sqlite/store.ts).
const WAL_LIMIT_PAGES = 20_000;

const dir = mkdtempSync(join(tmpdir(), 'scanhub-writer-floor-'));
const template = join(dir, 'template.db');
const gateways = Array.from({ length: GATEWAYS }, () => randomUUID());

function seed() {
  const started = performance.now();
  if (PAGE_SIZE) {
    const empty = new Database(template);
    empty.pragma(`page_size = ${PAGE_SIZE}`);
    empty.exec('VACUUM');
    empty.close();
  }
  const db = openDatabase(template);
  report(BENCH, 'page_size', db.pragma('page_size', { simple: true }), 'bytes');
  db.pragma('cache_size = -1000000');
  const now = Date.now();
  db.prepare('INSERT INTO customers (id, created) VALUES (?, ?)').run(CUSTOMER, now);
  const gateway = db.prepare(`INSERT INTO gateways (id, customer_id, name, usecase, station, created, last_updated) VALUES (?, ?, ?, 'picking', ?, ?, ?)`);
  gateways.forEach((id, n) => gateway.run(id, CUSTOMER, `gw-${n}`, `Station ${n}`, now, now));
  // With the indexes in place, unlike events-data.js: an index built by sorting has full pages, and
  // the first random inserts would split nearly every page they touch; grown by inserts, as ingest
  // grows it, the id index has the page fill the writer meets in a deployment.
  const insert = sqliteEventSeeder(db, { customer: CUSTOMER, events: SEED, start: now - 30 * 86_400_000, span: 30 * 86_400_000, gateways });
  for (let from = 0; from < SEED; from += 500_000) db.transaction(() => insert(from, Math.min(SEED, from + 500_000)))();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  report(BENCH, 'seed_seconds', (performance.now() - started) / 1000, 's');
}

// Payloads as bench/mqtt-load.js sends them: one event a message, a random id, created now
// (left out when `stamped`).
const run = randomBytes(2).toString('hex');
let counter = 0;
function message(receivedAt, stamped = false) {
  const g = counter % GATEWAYS;
  const id = `${randomBytes(4).toString('hex')}-${run}-4000-8${g.toString(16).padStart(3, '0')}-00${String(counter++).padStart(10, '0')}`;
  const payload = Buffer.from(JSON.stringify({ id, class: 'event', type: 'scan', created: stamped ? undefined : receivedAt, scan_code: `4006381333931-${g}`, scan_duration: 142, scan_decode_symbology: 'EAN-13', device_id: `scanner-${g}-a`, device_battery: 87, device_firmware: '2.4.1', device_temperature: 31.5 }));
  return { gatewayId: gateways[g], receivedAt, payload };
}

/** The rows the committer would insert for these messages (STORED_EVENT_COLUMNS order). */
function rowsOf(batch) {
  return batch.map(({ gatewayId, receivedAt, payload }) => {
    const values = [...parsePayload(payload, receivedAt).events[0]];
    values[COLUMN.customer_id] = CUSTOMER;
    values[COLUMN.gateway_id] = gatewayId;
    values[COLUMN.gateway_usecase] = 'picking';
    values[COLUMN.gateway_station] = 'Station';
    return values;
  });
}

function startCheckpointer(file) {
  const worker = new Worker(new URL('../dist/store/sqlite/checkpoint-thread-entry.js', import.meta.url), { workerData: { databaseFile: file } });
  return new Promise((resolve, reject) => {
    worker.once('message', () => resolve(worker));
    worker.once('error', reject);
  });
}

const variants = {
  committer: { drop: [] },
  'committer, events without created': { drop: [], stamped: true },
  inserts: { drop: [] },
  'inserts with the global id index': { drop: [], create: ['CREATE UNIQUE INDEX events_id ON events(id)'] },
  'table alone': { drop: ['events_customer_created', 'events_gateway_created', 'events_stamped_id'] },
};

async function round(name) {
  const file = join(dir, 'round.db');
  rmSync(file, { force: true });
  rmSync(`${file}-wal`, { force: true });
  rmSync(`${file}-shm`, { force: true });
  copyFileSync(template, file);
  const db = openDatabase(file);
  for (const index of variants[name].drop) db.exec(`DROP INDEX ${index}`);
  for (const sql of variants[name].create ?? []) db.exec(sql);
  tuneForIngest(db, WAL_LIMIT_PAGES);
  if (CACHE_MB) db.pragma(`cache_size = -${CACHE_MB * 1024}`);
  const checkpointer = await startCheckpointer(file);
  // Built before the clock starts: the messages (the committer parses them) or the rows.
  const batches = [];
  for (let i = 0; i < EVENTS; i += BATCH) batches.push(Array.from({ length: Math.min(BATCH, EVENTS - i) }, () => message(Date.now(), variants[name].stamped)));
  let work;
  if (name.startsWith('committer')) {
    const commit = createCommitter(db);
    work = batches.map((batch) => () => {
      const result = commit(batch);
      if (result.events !== batch.length) throw new Error(`stored ${result.events} of ${batch.length}`);
    });
  } else {
    const insert = db.prepare(INSERT_EVENT_SQL);
    const store = db.transaction((rows) => {
      let inserted = 0;
      for (const row of rows) inserted += insert.run(row).changes;
      if (inserted !== rows.length) throw new Error(`stored ${inserted} of ${rows.length}`);
    });
    work = batches.map(rowsOf).map((rows) => () => store.immediate(rows));
  }
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (const commit of work) commit();
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  await new Promise((resolve) => {
    checkpointer.once('exit', resolve);
    checkpointer.postMessage('close');
  });
  db.close();
  return { eventsPerSecond: EVENTS / seconds, cpuUsPerEvent: (used.user + used.system) / EVENTS };
}

try {
  seed();
  const results = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let r = 0; r < RUNS; r++) {
    for (const name of Object.keys(variants).filter((v) => !VARIANTS || VARIANTS.includes(v))) {
      const result = await round(name);
      results[name].push(result);
      console.error(`${BENCH}: round ${r + 1} ${name}: ${Math.round(result.eventsPerSecond)} events/s, ${result.cpuUsPerEvent.toFixed(1)} CPU us/event (every thread)`);
    }
  }
  const committer = results.committer.length ? median(results.committer.map((r) => r.eventsPerSecond)) : undefined;
  for (const [name, runs] of Object.entries(results).filter(([, runs]) => runs.length)) {
    const rates = runs.map((r) => r.eventsPerSecond);
    const slug = name.replaceAll(',', '').replaceAll(' ', '_');
    report(BENCH, `${slug}_events_per_s`, median(rates), 'events/s');
    report(BENCH, `${slug}_spread`, (Math.max(...rates) - Math.min(...rates)) / median(rates), 'ratio');
    report(BENCH, `${slug}_cpu_us_per_event`, median(runs.map((r) => r.cpuUsPerEvent)), 'us');
    if (name !== 'committer' && committer) report(BENCH, `${slug}_over_committer`, median(rates) / committer, 'ratio');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
