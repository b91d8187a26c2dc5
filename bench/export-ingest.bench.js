// Ingest while an export runs, over the 10 M-event data set (bench/README.md "export-ingest"):
// events/s alone and during an export of 21 days, the export's rate under that ingest, and RSS.
// What it adds is deleted at the end, so the cached data set stays as seeded.
import { request } from 'undici';
import { startServer } from '../dist/serve/start.js';
import { report } from './lib.js';
import { loadGateways, runLoad } from './load-run.js';
import { CUSTOMER, removeExports, seededDataDir } from './events-data.js';

const BENCH = 'export-ingest';
const DAY = 24 * 3600 * 1000;
const gatewayCount = Number(process.env.BENCH_GATEWAYS ?? 200);
const window = Number(process.env.BENCH_WINDOW ?? 16);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);

const data = await seededDataDir((metric, value, unit) => report(BENCH, metric, value, unit));
const server = await startServer({
  dataDir: data.dataDir,
  host: '127.0.0.1',
  port: 0,
  mqttPort: 0,
  mqttPublicHost: 'localhost',
  customerId: CUSTOMER,
  adminEmail: data.email,
  adminPassword: data.password,
  logger: false,
});
const db = server.ctx.store.db;
// What earlier runs may have left: ingested events are all after the seeded month.
const cleanUp = () => {
  db.prepare('DELETE FROM events WHERE customer_id = ? AND created >= ?').run(CUSTOMER, data.end);
  db.prepare("DELETE FROM gateways WHERE customer_id = ? AND name LIKE 'bench-ingest-%'").run(CUSTOMER);
};
try {
  cleanUp();
  const fleet = await loadGateways(server, CUSTOMER, gatewayCount, 'bench-ingest');
  const load = (durationMs, onStart) => runLoad(server, fleet, durationMs, { window, onStart });

  let rssMax = 0;
  let sampler;
  const sampleRss = () => {
    rssMax = 0;
    sampler = setInterval(() => (rssMax = Math.max(rssMax, process.memoryUsage.rss() / 1024 / 1024)), 25);
  };
  // A first run warms the JIT, the TLS sessions and the pages of the id index; not reported.
  await load(3000);
  const alone = await load(seconds * 1000, sampleRss);
  clearInterval(sampler);
  report(BENCH, 'ingest_alone', alone, 'events/s');
  report(BENCH, 'process_rss_max_ingest_alone', rssMax, 'MB');

  // The export: 21 days of the month, long enough to outlast the second load run.
  const token = (await (await request(`${server.url}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: data.email, password: data.password }),
  })).body.json()).id_token;
  const start = data.start + DAY;
  const end = start + 21 * DAY;
  const rows = db.prepare('SELECT count(*) FROM events WHERE customer_id = ? AND created >= ? AND created < ?').pluck().get(CUSTOMER, start, end);
  let task;
  let exportStarted;
  const during = await load(seconds * 1000, async () => {
    const response = await request(`${server.url}/${CUSTOMER}/events/export/tasks?start_time_millis=${start}&end_time_millis=${end}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    task = (await response.body.json()).task;
    exportStarted = performance.now();
    sampleRss();
  });
  const record = await server.ctx.store.exportTasks.byId(CUSTOMER, task);
  const stillRunning = record.status === 'PENDING';
  const done = await server.ctx.exporter.finished(record);
  const exportSeconds = (performance.now() - exportStarted) / 1000;
  clearInterval(sampler);
  if (done.status !== 'SUCCESSFUL' || done.rows !== rows) throw new Error(`export ended ${done.status} with ${done.rows} of ${rows} rows`);
  if (!stillRunning) console.error('export-ingest: the export finished before the load run did; raise the export range');
  report(BENCH, 'ingest_during_export', during, 'events/s', 15_000, '>=');
  report(BENCH, 'export_rows', rows, 'rows');
  report(BENCH, 'export_rate_under_ingest', rows / exportSeconds, 'rows/s');
  report(BENCH, 'process_rss_max_during_export', rssMax, 'MB');
} finally {
  cleanUp();
  await server.close();
  removeExports(data.dataDir);
}
