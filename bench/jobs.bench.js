// Job analysis over 1,000,000 events on 50 gateways through HTTP against a real `serve`
// (bench/README.md "jobs"): the analysis time (target <= 0.5 s) and how long other requests wait.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { SEED, gatewayId, seededDataDir, timedAnalysis } from './jobs-seed.js';
import { api, percentile, report } from './lib.js';

const BENCH = 'jobs';
const RUNS = 7;
const BIN = fileURLToPath(new URL('../bin/scanhub.js', import.meta.url));

/** Starts `scanhub serve` on the data directory; resolves once it prints the URL it serves. */
function startServe(dataDir) {
  const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', dataDir, '--port', '0', '--mqtt-port', '0'], {
    env: { ...process.env, SCANHUB_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(() => fail(new Error(`serve did not start within 30 s: ${stderr}`)), 30_000);
    const fail = (error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.on('exit', (code) => fail(new Error(`serve exited with ${code}: ${stderr}`)));
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const match = /is serving (http:\/\/\S+)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({ child, url: match[1] });
      }
    });
  });
}

function stopServe(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}


/** The benchmark's job configuration, created on the first run. */
async function jobConfigId(url, token) {
  const base = `/${SEED.customer}/job-configs`;
  const existing = (await api(url, 'GET', base, token)).items.find((c) => c.job_name === 'bench');
  if (existing) return existing.job_config_id;
  const gateway_ids = Array.from({ length: SEED.gateways }, (_, g) => gatewayId(g));
  const created = await api(url, 'POST', base, token, {
    job_name: 'bench',
    start_barcode: SEED.startBarcode,
    end_barcode: SEED.endBarcode,
    gateway_ids,
  });
  return created.job_config_id;
}

/** Latencies of GET /healthz, one after another, until `done` resolves. */
async function probeLatency(url, done) {
  const latencies = [];
  let finished = false;
  done.then(() => (finished = true));
  while (!finished && latencies.length < 100_000) {
    const started = performance.now();
    await request(url + '/healthz').then((r) => r.body.dump());
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return latencies;
}

const dataDir = await seededDataDir();
const { child, url } = await startServe(dataDir);
try {
  const { id_token: token } = await api(url, 'POST', '/auth/login', undefined, { email: SEED.adminEmail, password: SEED.adminPassword });
  const id = await jobConfigId(url, token);
  await timedAnalysis(url, token, id); // warm-up: starts the worker, maps the file

  const times = [];
  for (let run = 0; run < RUNS; run++) times.push(await timedAnalysis(url, token, id));
  report(BENCH, 'analysis_1M_events_50_gateways_median', percentile(times, 50), 's', 0.5);
  report(BENCH, 'analysis_1M_events_50_gateways_max', Math.max(...times), 's', 0.5);

  // Other requests while analyses run back to back: the event loop must stay free.
  const analyses = (async () => {
    for (let run = 0; run < 3; run++) await timedAnalysis(url, token, id);
  })();
  const latencies = await probeLatency(url, analyses);
  await analyses;
  report(BENCH, 'healthz_latency_during_analysis_p99', percentile(latencies, 99), 'ms', 50);
  report(BENCH, 'healthz_latency_during_analysis_max', Math.max(...latencies), 'ms');

} finally {
  await stopServe(child);
}
