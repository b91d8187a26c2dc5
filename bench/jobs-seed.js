// Seeds (once, cached under the OS temp directory) the data directory of the job benchmark:
// one customer with an administrator, 50 gateways and 1,000,000 events with job barcodes.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashPassword } from '../dist/auth/passwords.js';
import { insertEvents } from '../dist/store/sqlite/event-rows.js';
import { databaseFile, openDatabase } from '../dist/store/sqlite/open.js';
import { prepareDataDir } from '../dist/serve/bootstrap.js';
import { api } from './lib.js';

export const SEED = {
  version: 3,
  customer: 'bench',
  adminEmail: 'admin@bench.local',
  adminPassword: 'bench-password-123',
  gateways: 50,
  eventsPerGateway: 20_000,
  /** Events of one job: a start, the scans of the work, an end. */
  jobLength: 50,
  /** One event per gateway every this many milliseconds (the gateways are offset by 37 ms each). */
  stepMs: 4_000,
  t0: Date.UTC(2025, 0, 1),
  startBarcode: 'JOB-START',
  endBarcode: 'JOB-END',
};

export const gatewayId = (g) => `00000000-0000-4000-8000-${String(g).padStart(12, '0')}`;
const eventId = (g, i) => `${String(g).padStart(8, '0')}-0000-4000-9000-${String(i).padStart(12, '0')}`;

/** [start, end) covering every seeded event. */
export function seededRange() {
  return { start_time: SEED.t0, end_time: SEED.t0 + SEED.eventsPerGateway * SEED.stepMs + 1_000 };
}

/** The event `i` of gateway `g`: job markers at both ends of each job, telemetry now and then. */
export function event(g, i) {
  const created = SEED.t0 + i * SEED.stepMs + g * 37;
  const k = i % SEED.jobLength;
  const job = Math.floor(i / SEED.jobLength);
  const base = {
    id: eventId(g, i), class: 'event', created, scan_duration: null, scan_decode_symbology: null, device_id: `scanner-${g}`,
    device_battery: null, device_firmware: null, device_temperature: null, gateway_id: gatewayId(g),
    gateway_usecase: 'packing', gateway_station: `station-${g}`, metrics_worker_steps: null,
  };
  if (k % 7 === 3) return { ...base, type: 'telemetry', scan_code: null, device_battery: 80 };
  const code =
    k === 0 ? `${SEED.startBarcode}-${job}` : k === SEED.jobLength - 1 ? `${SEED.endBarcode}-${job}` : `40063813${String((i * 7919) % 100000).padStart(5, '0')}`;
  return { ...base, type: 'scan', scan_code: code, scan_decode_symbology: 'EAN-13', scan_duration: 120 };
}

/** The cached data directory, seeded when missing or from another seed version. */
export async function seededDataDir(log = (line) => process.stderr.write(line + '\n')) {
  const dataDir = join(tmpdir(), 'scanhub-bench-jobs');
  const marker = join(dataDir, 'seed.json');
  if (existsSync(marker) && JSON.parse(readFileSync(marker, 'utf8')).version === SEED.version) return dataDir;
  rmSync(dataDir, { recursive: true, force: true });
  prepareDataDir(dataDir);
  const db = openDatabase(databaseFile(dataDir));
  try {
    const now = Date.now();
    db.prepare('INSERT INTO customers (id, created) VALUES (?, ?)').run(SEED.customer, now);
    db.prepare(
      `INSERT INTO users (id, customer_id, email, roles, password_hash, created, last_updated)
       VALUES ('00000000-0000-4000-8000-aaaaaaaaaaaa', ?, ?, '["ADMIN_ROLE"]', ?, ?, ?)`,
    ).run(SEED.customer, SEED.adminEmail, await hashPassword(SEED.adminPassword), now, now);
    const gateway = db.prepare(
      `INSERT INTO gateways (id, customer_id, name, usecase, station, created, last_updated) VALUES (?, ?, ?, 'packing', ?, ?, ?)`,
    );
    for (let g = 0; g < SEED.gateways; g++) gateway.run(gatewayId(g), SEED.customer, `gateway-${g}`, `station-${g}`, now, now);
    const started = Date.now();
    // Interleaved in time, as gateways really send; in chunks to bound memory.
    const chunk = [];
    for (let i = 0; i < SEED.eventsPerGateway; i++) {
      for (let g = 0; g < SEED.gateways; g++) chunk.push(event(g, i));
      if (chunk.length >= 50_000) insertEvents(db, SEED.customer, chunk.splice(0));
    }
    if (chunk.length) insertEvents(db, SEED.customer, chunk);
    db.pragma('wal_checkpoint(TRUNCATE)');
    log(`seeded ${SEED.gateways * SEED.eventsPerGateway} events in ${((Date.now() - started) / 1000).toFixed(1)} s into ${dataDir}`);
  } finally {
    db.close();
  }
  writeFileSync(marker, JSON.stringify(SEED));
  return dataDir;
}

/** One POST /{customer}/job-analysis over the seeded range, in seconds; checks every job was found. */
export async function timedAnalysis(url, token, id) {
  const started = performance.now();
  const answer = await api(url, 'POST', `/${SEED.customer}/job-analysis`, token, { job_config_id: id, ...seededRange() });
  const seconds = (performance.now() - started) / 1000;
  const jobs = answer.results.reduce((n, r) => n + r.jobs.length, 0);
  const expected = SEED.gateways * Math.floor(SEED.eventsPerGateway / SEED.jobLength);
  if (jobs !== expected) throw new Error(`analysis found ${jobs} jobs, expected ${expected}`);
  return seconds;
}
