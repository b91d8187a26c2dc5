// CSV export over 10 M stored events through a real `scanhub serve` (bench/README.md "export"):
// export tasks with the server's RSS sampled and a second client asking for pages during and
// without each export (the target is on the ratio of their p99s), then the synchronous export.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'undici';
import { openDatabase } from '../dist/store/sqlite/open.js';
import { LeanHttpClient } from './http-client.js';
import { percentile, report } from './lib.js';
import { CUSTOMER, login, removeExports, rssMb, seededDataDir, startServeProcess } from './events-data.js';

const BENCH = 'export';
const DAY = 24 * 3600 * 1000;
const days = Number(process.env.BENCH_EXPORT_DAYS ?? 7);
const runs = Number(process.env.BENCH_EXPORT_RUNS ?? 3);
const PROBE_EVERY_MS = 10;

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
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const written = [];
const server = await startServeProcess(data.dataDir, (line) => line.msg === 'export written' && written.push(line));
const client = new Client(server.url);
const prober = await LeanHttpClient.connect(server.url);
try {
  const token = await login(server.url, data);
  const headers = { authorization: `Bearer ${token}` };
  const call = async (method, path) => {
    const response = await client.request({ method, path, headers });
    const body = await response.body.json();
    if (response.statusCode >= 300) throw new Error(`${method} ${path}: ${response.statusCode} ${JSON.stringify(body)}`);
    return body;
  };

  let seed = 11;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  /** Pages at random places every PROBE_EVERY_MS until `until()` says stop: their latencies. */
  const probe = async (until) => {
    const latencies = [];
    while (!until()) {
      const to = data.start + DAY + Math.floor(random() * 28 * DAY);
      const began = performance.now();
      const response = await prober.get(`/${CUSTOMER}/events?start_time_millis=${to - DAY}&end_time_millis=${to}`, headers);
      latencies.push(performance.now() - began);
      if (response.status !== 200) throw new Error(`page: ${response.status} ${response.tail}`);
      await sleep(PROBE_EVERY_MS);
    }
    return latencies;
  };
  await probe(((count) => () => count-- <= 0)(100)); // warm-up

  const rssBefore = rssMb(server.pid);
  let rssMax = rssBefore;
  const rates = [];
  const endToEnd = [];
  const during = [];
  const alone = [];
  let file;
  for (let run = 0; run < runs; run++) {
    const sampler = setInterval(() => (rssMax = Math.max(rssMax, rssMb(server.pid))), 25);
    let exporting = true;
    const probing = probe(() => !exporting);
    const began = performance.now();
    const { task } = await call('POST', `/${CUSTOMER}/events/export/tasks?start_time_millis=${start}&end_time_millis=${end}`);
    let state;
    do {
      await sleep(100);
      state = await call('GET', `/${CUSTOMER}/events/export/tasks/${task}`);
    } while (!state.completed);
    const seconds = (performance.now() - began) / 1000;
    exporting = false;
    during.push(...(await probing));
    clearInterval(sampler);
    if (state.status !== 'SUCCESSFUL') throw new Error(`export task ended ${state.status}`);
    const log = written.find((line) => line.task === task);
    if (log.rows !== rows) throw new Error(`exported ${log.rows} rows, expected ${rows}`);
    rates.push(rows / (log.ms / 1000));
    endToEnd.push(rows / seconds);
    file = statSync(join(data.dataDir, 'exports', `${task}.csv`));
    removeExports(data.dataDir);
    // As long again without an export.
    const quietUntil = performance.now() + seconds * 1000;
    alone.push(...(await probe(() => performance.now() >= quietUntil)));
  }

  report(BENCH, 'export_rows', rows, 'rows');
  report(BENCH, 'export_file_mb', file.size / 1024 / 1024, 'MB');
  rates.forEach((rate, run) => report(BENCH, `run_${run + 1}_export_rate`, rate, 'rows/s'));
  report(BENCH, 'export_rate', percentile(rates, 50), 'rows/s', 400_000, '>=');
  report(BENCH, 'export_rate_min', Math.min(...rates), 'rows/s');
  report(BENCH, 'export_rate_end_to_end', percentile(endToEnd, 50), 'rows/s');
  report(BENCH, 'export_server_rss_before', rssBefore, 'MB');
  report(BENCH, 'export_server_rss_max', rssMax, 'MB', 300, '<=');
  report(BENCH, 'page_500_without_export_p50', percentile(alone, 50), 'ms');
  report(BENCH, 'page_500_without_export_p99', percentile(alone, 99), 'ms');
  report(BENCH, 'page_500_during_export_p50', percentile(during, 50), 'ms');
  report(BENCH, 'page_500_during_export_p99', percentile(during, 99), 'ms');
  report(BENCH, 'page_500_p99_during_over_without', percentile(during, 99) / percentile(alone, 99), 'x', 2, '<=');
  report(BENCH, 'page_500_samples', during.length, 'requests during exports');
  report(BENCH, 'page_500_samples_without', alone.length, 'requests without');

  // The synchronous export of one day: answered once the file is written.
  const dayRows = countRows(end, end + DAY);
  const syncBegan = performance.now();
  const { download_link } = await call('GET', `/${CUSTOMER}/events/export?start_time_millis=${end}&end_time_millis=${end + DAY}`);
  const syncSeconds = (performance.now() - syncBegan) / 1000;
  if (!download_link.includes('/downloads/exports/')) throw new Error(`unexpected link ${download_link}`);
  report(BENCH, 'sync_export_day_rows', dayRows, 'rows');
  report(BENCH, 'sync_export_day_seconds', syncSeconds, 's');
} finally {
  prober.close();
  await client.close();
  await server.stop();
  removeExports(data.dataDir);
}
