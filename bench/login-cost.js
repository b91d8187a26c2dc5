// The log-in cost of bench/auth.bench.js (issue 27, item 8): POST /auth/login against `scanhub
// serve` processes started from the CLI, one of this build (scrypt N = 2^17) and, with
// BENCH_BASE_BIN, one of another build (the commit before: N = 2^14), each on a fresh data
// directory, in runs of alternating order. Per run: LOGIN_SEQUENTIAL log-ins one after another
// (their latency), then LOGIN_CONCURRENT at once (the wall time of the burst: scrypt runs in
// libuv's thread pool, 4 threads, on 2 cores), and the process's peak RSS at the end (VmHWM:
// each hash at 2^17 holds 128 MiB while it runs).
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scrypt } from 'node:crypto';
import { promisify } from 'node:util';
import { startServeProcess } from './events-data.js';
import { api, median, report } from './lib.js';

const RUNS = Number(process.env.LOGIN_RUNS ?? 5);
const SEQUENTIAL = Number(process.env.LOGIN_SEQUENTIAL ?? 10);
const CONCURRENT = Number(process.env.LOGIN_CONCURRENT ?? 8);

/** Milliseconds of one log-in. */
async function timedLogin(url, email, password) {
  const started = performance.now();
  await api(url, 'POST', '/auth/login', undefined, { email, password });
  return performance.now() - started;
}

/** The peak resident set of a process, in MiB (Linux). */
function peakRssMiB(pid) {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

/** Median ms of hashing one password in this process at N, r = 8, p = 1 (what a log-in verifies). */
async function hashMs(N, times = 5) {
  const hash = promisify(scrypt);
  const took = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    await hash('bench-password-123', 'saltsaltsaltsalt', 32, { N, r: 8, p: 1, maxmem: 256 * N * 8 });
    took.push(performance.now() - started);
  }
  return median(took);
}

/** Runs the log-in measurement and reports it under `bench`, logging in as the administrator that SCANHUB_ADMIN_EMAIL and _PASSWORD make. */
export async function measureLogins(bench, { email, password }) {
  report(bench, 'scrypt_2^14_hash_ms_median', await hashMs(2 ** 14), 'ms');
  report(bench, 'scrypt_2^17_hash_ms_median', await hashMs(2 ** 17), 'ms');
  const builds = { n17: undefined };
  if (process.env.BENCH_BASE_BIN) builds.n14 = process.env.BENCH_BASE_BIN;
  else console.error(`${bench}: the N = 2^14 side skipped: set BENCH_BASE_BIN to the bin/scanhub.js of a build before the change (e.g. git archive 8a87cf9, built)`);
  const figures = Object.fromEntries(Object.keys(builds).map((name) => [name, { latency: [], burst: [], rss: [] }]));
  process.env.SCANHUB_AUTH_RATE_LIMIT = '100000';
  for (let run = 0; run < RUNS; run++) {
    const order = run % 2 ? Object.keys(builds).reverse() : Object.keys(builds);
    for (const name of order) {
      const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-bench-login-'));
      const server = await startServeProcess(dataDir, () => {}, () => {}, builds[name]);
      try {
        await timedLogin(server.url, email, password); // warm-up
        for (let i = 0; i < SEQUENTIAL; i++) figures[name].latency.push(await timedLogin(server.url, email, password));
        const started = performance.now();
        await Promise.all(Array.from({ length: CONCURRENT }, () => timedLogin(server.url, email, password)));
        figures[name].burst.push(performance.now() - started);
        figures[name].rss.push(peakRssMiB(server.pid));
      } finally {
        await server.stop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
  }
  for (const [name, { latency, burst, rss }] of Object.entries(figures)) {
    const side = name === 'n17' ? 'scrypt_2^17' : 'scrypt_2^14';
    report(bench, `${side}_login_ms_median`, median(latency), 'ms');
    report(bench, `${side}_login_ms_min`, Math.min(...latency), 'ms');
    report(bench, `${side}_login_ms_max`, Math.max(...latency), 'ms');
    report(bench, `${side}_burst_of_${CONCURRENT}_ms_median`, median(burst), 'ms');
    report(bench, `${side}_serve_peak_rss_mib_median`, median(rss), 'MiB');
  }
  if (figures.n14) report(bench, 'login_ms_median_ratio_2^17_to_2^14', median(figures.n17.latency) / median(figures.n14.latency), 'x');
  report(bench, 'login_runs', RUNS, `runs of ${SEQUENTIAL} sequential log-ins and a burst of ${CONCURRENT}, each build on a fresh data directory`);
}
