// Authentication cost (bench/README.md "auth"): requests/s on a small events page with an API key
// against an IdToken (target: ratio >= 0.95), then the log-in cost at scrypt 2^17 (login-cost.js).
// AUTH_PARTS (`key,login`) chooses the parts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { openStore, sqliteLocator } from '../dist/store/open.js';
import { LeanHttpClient } from './http-client.js';
import { api, median, report } from './lib.js';
import { startServeProcess } from './events-data.js';
import { measureLogins } from './login-cost.js';

const BENCH = 'auth';
const CUSTOMER = 'default';
const EMAIL = 'admin@bench.local';
const PASSWORD = 'bench-password-123';
const RUNS = Number(process.env.AUTH_RUNS ?? 5);
const SECONDS = Number(process.env.AUTH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.AUTH_CONNECTIONS ?? 8);
const PAGE = 10;
const PARTS = (process.env.AUTH_PARTS ?? 'key,login').split(',');

/** A data directory with a few events of the customer, written before serve starts. */
async function seed() {
  const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-bench-auth-'));
  const store = await openStore(sqliteLocator(dataDir), 'server');
  const now = Date.now();
  const rows = Array.from({ length: 50 }, (_, i) => ({
    id: randomUUID(), class: 'event', type: 'scan', created: now - 60_000 - i * 1000, scan_code: `BENCH-${i}`,
    scan_duration: null, scan_decode_symbology: null, device_id: 'ring-1', device_battery: null, device_firmware: null,
    device_temperature: null, gateway_id: null, gateway_usecase: null, gateway_station: null, metrics_worker_steps: null,
  }));
  await store.events.insert(CUSTOMER, rows);
  await store.close();
  return dataDir;
}

/** Requests per second over SECONDS with CONNECTIONS keep-alive connections, each one request at a time. */
async function measure(url, authorization, seconds) {
  const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => LeanHttpClient.connect(url)));
  const path = `/${CUSTOMER}/events?limit=${PAGE}`;
  let done = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    clients.map(async (client) => {
      while (performance.now() < until) {
        const answer = await client.get(path, { authorization });
        if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status}`);
        done++;
      }
    }),
  );
  for (const client of clients) client.close();
  return done / seconds;
}

Object.assign(process.env, { SCANHUB_ADMIN_EMAIL: EMAIL, SCANHUB_ADMIN_PASSWORD: PASSWORD, SCANHUB_CUSTOMER_ID: CUSTOMER, SCANHUB_LOG_LEVEL: 'warn' });
if (PARTS.includes('key')) await measureKeys();
if (PARTS.includes('login')) await measureLogins(BENCH, { email: EMAIL, password: PASSWORD });

/** API key against IdToken: requests per second of a small page, runs alternating. */
async function measureKeys() {
  const dataDir = await seed();
  const server = await startServeProcess(dataDir);
  try {
    const { id_token: token } = await api(server.url, 'POST', '/auth/login', undefined, { email: EMAIL, password: PASSWORD });
    const { key } = await api(server.url, 'POST', `/${CUSTOMER}/api-keys`, token, { name: 'bench', permissions: ['event.read'] });
    const modes = { api_key: `Bearer ${key}`, id_token: `Bearer ${token}` };
    for (const authorization of Object.values(modes)) await measure(server.url, authorization, 1); // warm-up
    const rates = { api_key: [], id_token: [] };
    for (let run = 0; run < RUNS; run++) {
      // Alternate which goes first, so neither always follows the other.
      const order = run % 2 ? ['id_token', 'api_key'] : ['api_key', 'id_token'];
      for (const mode of order) rates[mode].push(await measure(server.url, modes[mode], SECONDS));
    }
    for (const mode of ['api_key', 'id_token']) {
      report(BENCH, `${mode}_req_per_s_median`, median(rates[mode]), 'req/s');
      report(BENCH, `${mode}_req_per_s_min`, Math.min(...rates[mode]), 'req/s');
      report(BENCH, `${mode}_req_per_s_max`, Math.max(...rates[mode]), 'req/s');
    }
    report(BENCH, 'runs', RUNS, `runs of ${SECONDS} s, ${CONNECTIONS} connections, ${PAGE}-event pages`);
    report(BENCH, 'api_key_over_id_token_median_ratio', median(rates.api_key) / median(rates.id_token), 'ratio', 0.95, '>=');
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
