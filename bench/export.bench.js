// CSV export over 10 million stored events, through a real `scanhub serve` process: an export
// task of 7 days (BENCH_EXPORT_DAYS; about 2.3 million rows), polled until done, while the
// server's RSS (/proc/<pid>/status VmRSS) is sampled every 25 ms and a second client asks for
// 500-event pages every 50 ms (the API must keep answering while an export runs).
// Rows/s from the server's own "export written" log line (worker time) and end to end (POST to
// the poll that saw it done). Then the synchronous GET /events/export of one day.
// Env: BENCH_EVENTS (10,000,000), BENCH_EXPORT_DAYS (7).
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'undici';
import { openDatabase } from '../dist/store/sqlite/open.js';
import { percentile, report } from './lib.js';
import { CUSTOMER, login, removeExports, rssMb, seededDataDir, startServeProcess } from './events-data.js';

const BENCH = 'export';
const DAY = 24 * 3600 * 1000;
const days = Number(process.env.BENCH_EXPORT_DAYS ?? 7);

const data = await seededDataDir((metric, value, unit) => report(BENCH, metric, value, unit));
const start = data.start + DAY;
const end = start + days * DAY;
const countRows = (from, to) => {
  const db = openDatabase(join(data.dataDir, 'scanhub.db'), { readonly: true });
  try {
    return db.prepare('SELECT count(*) FROM events WHERE customer_id = ? AND created >= ? AND created < ?').pluck().get(CUSTOMER, from, to);
  } finally {
    db.close();
  }
};
const rows = countRows(start, end);

const written = [];
const server = await startServeProcess(data.dataDir, (line) => line.msg === 'export written' && written.push(line));
const client = new Client(server.url);
const prober = new Client(server.url);
try {
  const token = await login(server.url, data);
  const headers = { authorization: `Bearer ${token}` };
  const call = async (http, method, path) => {
    const response = await http.request({ method, path, headers });
    const body = await response.body.json();
    if (response.statusCode >= 300) throw new Error(`${method} ${path}: ${response.statusCode} ${JSON.stringify(body)}`);
    return body;
  };

  const rssBefore = rssMb(server.pid);
  let rssMax = rssBefore;
  const sampler = setInterval(() => (rssMax = Math.max(rssMax, rssMb(server.pid))), 25);
  let probing = true;
  const pageLatencies = [];
  const probe = (async () => {
    while (probing) {
      const to = data.start + DAY + Math.floor(Math.random() * 28 * DAY);
      const began = performance.now();
      await call(prober, 'GET', `/${CUSTOMER}/events?start_time_millis=${to - DAY}&end_time_millis=${to}`);
      pageLatencies.push(performance.now() - began);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();

  const began = performance.now();
  const { task } = await call(client, 'POST', `/${CUSTOMER}/events/export/tasks?start_time_millis=${start}&end_time_millis=${end}`);
  let state;
  do {
    await new Promise((resolve) => setTimeout(resolve, 100));
    state = await call(client, 'GET', `/${CUSTOMER}/events/export/tasks/${task}`);
  } while (!state.completed);
  const seconds = (performance.now() - began) / 1000;
  probing = false;
  await probe;
  clearInterval(sampler);
  if (state.status !== 'SUCCESSFUL') throw new Error(`export task ended ${state.status}`);
  const log = written.find((line) => line.task === task);
  if (log.rows !== rows) throw new Error(`exported ${log.rows} rows, expected ${rows}`);
  const file = statSync(join(data.dataDir, 'exports', `${task}.csv`));

  report(BENCH, 'export_rows', rows, 'rows');
  report(BENCH, 'export_file_mb', file.size / 1024 / 1024, 'MB');
  report(BENCH, 'export_rate', rows / (log.ms / 1000), 'rows/s', 250_000, '>=');
  report(BENCH, 'export_rate_end_to_end', rows / seconds, 'rows/s');
  report(BENCH, 'export_server_rss_before', rssBefore, 'MB');
  report(BENCH, 'export_server_rss_max', rssMax, 'MB', 300, '<=');
  report(BENCH, 'page_500_during_export_p50', percentile(pageLatencies, 50), 'ms');
  report(BENCH, 'page_500_during_export_p99', percentile(pageLatencies, 99), 'ms');
  report(BENCH, 'page_500_during_export_samples', pageLatencies.length, 'requests');

  // The synchronous export of one day: answered once the file is written.
  const dayRows = countRows(end, end + DAY);
  const syncBegan = performance.now();
  const { download_link } = await call(client, 'GET', `/${CUSTOMER}/events/export?start_time_millis=${end}&end_time_millis=${end + DAY}`);
  const syncSeconds = (performance.now() - syncBegan) / 1000;
  if (!download_link.includes('/downloads/exports/')) throw new Error(`unexpected link ${download_link}`);
  report(BENCH, 'sync_export_day_rows', dayRows, 'rows');
  report(BENCH, 'sync_export_day_seconds', syncSeconds, 's');
} finally {
  await client.close();
  await prober.close();
  await server.stop();
  removeExports(data.dataDir);
}
