// Cold start of `scanhub serve`: milliseconds from spawning `node bin/scanhub.js serve` to the
// first 200 from /healthz, on a fresh data directory (migrations, key generation, bootstrap of
// the administrator with a generated password) and on an existing one. Target: under 1 s.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { percentile, report } from './lib.js';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'scanhub.js');
const RUNS = Number(process.env.COLDSTART_RUNS ?? 5);
const TARGET_MS = 1000;
const GIVE_UP_MS = 15_000;

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** The status of GET /healthz, or undefined while nothing listens. */
function health(port) {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/** Starts serve on the data directory; resolves with the ms to the first 200, after stopping it again. */
async function coldStart(dataDir) {
  const port = await freePort();
  const mqttPort = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', dataDir, '--port', String(port), '--mqtt-port', String(mqttPort)], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, SCANHUB_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let elapsed;
  try {
    while (performance.now() - started < GIVE_UP_MS) {
      if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}: ${stderr}`);
      if ((await health(port)) === 200) {
        elapsed = performance.now() - started;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    if (elapsed === undefined) throw new Error(`no 200 from /healthz within ${GIVE_UP_MS} ms: ${stderr}`);
  } finally {
    child.kill('SIGTERM');
    const { code, signal } = await exited;
    if (elapsed !== undefined && code !== 0) throw new Error(`serve exited with ${code ?? signal} on SIGTERM: ${stderr}`);
  }
  return elapsed;
}

const parent = mkdtempSync(join(tmpdir(), 'scanhub-coldstart-'));
try {
  const fresh = [];
  const existing = [];
  for (let run = 0; run < RUNS; run++) {
    const dataDir = join(parent, `run-${run}`);
    fresh.push(await coldStart(dataDir));
    existing.push(await coldStart(dataDir));
  }
  report('coldstart', 'fresh_data_dir_median_ms', percentile(fresh, 50), 'ms', TARGET_MS);
  report('coldstart', 'fresh_data_dir_max_ms', Math.max(...fresh), 'ms', TARGET_MS);
  report('coldstart', 'existing_data_dir_median_ms', percentile(existing, 50), 'ms', TARGET_MS);
  report('coldstart', 'existing_data_dir_max_ms', Math.max(...existing), 'ms', TARGET_MS);
} finally {
  rmSync(parent, { recursive: true, force: true });
}
