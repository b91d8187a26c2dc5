// MQTT ingest while job analyses run back to back, over the jobs data set (bench/README.md
// "jobs-ingest"). What it adds is deleted at the end, so the cached data set stays as seeded.
import { startServer } from '../dist/serve/start.js';
import { SEED, gatewayId, seededDataDir, seededRange } from './jobs-seed.js';
import { api, percentile, report } from './lib.js';
import { loadGateways, runLoad } from './load-run.js';

const BENCH = 'jobs-ingest';
const seconds = Number(process.env.BENCH_SECONDS ?? 10);


const dataDir = await seededDataDir();
const server = await startServer({
  dataDir,
  host: '127.0.0.1',
  port: 0,
  mqttPort: 0,
  mqttPublicHost: 'localhost',
  customerId: SEED.customer,
  adminEmail: SEED.adminEmail,
  adminPassword: SEED.adminPassword,
  logger: false,
});
const db = server.ctx.store.db;
const cleanUp = () => {
  db.prepare("DELETE FROM events WHERE gateway_id IN (SELECT id FROM gateways WHERE name LIKE 'bench-ingest-%')").run();
  db.prepare("DELETE FROM gateways WHERE name LIKE 'bench-ingest-%'").run();
  db.prepare("DELETE FROM job_configs WHERE job_name = 'bench-ingest'").run();
};
try {
  cleanUp();
  const { id_token: token } = await api(server.url, 'POST', '/auth/login', undefined, { email: SEED.adminEmail, password: SEED.adminPassword });
  const config = await api(server.url, 'POST', `/${SEED.customer}/job-configs`, token, {
    job_name: 'bench-ingest',
    start_barcode: SEED.startBarcode,
    end_barcode: SEED.endBarcode,
    gateway_ids: Array.from({ length: SEED.gateways }, (_, g) => gatewayId(g)),
  });
  const analyze = () =>
    api(server.url, 'POST', `/${SEED.customer}/job-analysis`, token, { job_config_id: config.job_config_id, ...seededRange() });
  await analyze(); // starts the worker, maps the file

  const fleet = await loadGateways(server, SEED.customer, 200, 'bench-ingest');
  await runLoad(server, fleet, 3000); // warms the JIT, TLS sessions and index pages; not reported
  report(BENCH, 'ingest_alone', await runLoad(server, fleet, seconds * 1000), 'events/s');

  let running = true;
  const times = [];
  let analyses;
  const during = await runLoad(server, fleet, seconds * 1000, {
    onStart: async () => {
      analyses = (async () => {
        while (running) {
          const started = performance.now();
          await analyze();
          times.push((performance.now() - started) / 1000);
        }
      })();
    },
  });
  running = false;
  await analyses;
  report(BENCH, 'ingest_during_analyses', during, 'events/s', 15_000, '>=');
  report(BENCH, 'analyses_during_ingest', times.length, 'count');
  report(BENCH, 'analysis_under_ingest_median', percentile(times, 50), 's');
  report(BENCH, 'analysis_under_ingest_max', Math.max(...times), 's');
} finally {
  cleanUp();
  await server.close();
}
