// Cold start of `scanhub serve` (bench/README.md "coldstart"): milliseconds from the spawn to the
// first 200 from /healthz, on a fresh data directory and on an existing one. Target: under 1 s.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, percentile, report } from './lib.js';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'scanhub.js');
const RUNS = Number(process.env.COLDSTART_RUNS ?? 5);
const TARGET_MS = 1000;
const GIVE_UP_MS = 15_000;


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

// Linux reports a process's CPU time in clock ticks, 100 per second on every common kernel.
const TICK_MS = 10;

/**
 * CPU milliseconds (user + system) the process used so far, from /proc; undefined elsewhere.
 * On a busy machine the wall-clock figure mostly measures the neighbours; this one does not.
 */
function cpuMs(pid) {
  const file = `/proc/${pid}/stat`;
  if (!existsSync(file)) return undefined;
  // Fields after the command name (which may contain spaces) start at field 3; utime and stime are 14 and 15.
  const stat = readFileSync(file, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/** Starts serve on the data directory; resolves with the ms to the first 200 (and CPU ms used by then), after stopping it. */
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
  let cpu;
  try {
    while (performance.now() - started < GIVE_UP_MS) {
      if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}: ${stderr}`);
      if ((await health(port)) === 200) {
        elapsed = performance.now() - started;
        cpu = cpuMs(child.pid);
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
  return { elapsed, cpu };
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
  for (const [kind, runs] of [['fresh_data_dir', fresh], ['existing_data_dir', existing]]) {
    const wall = runs.map((r) => r.elapsed);
    report('coldstart', `${kind}_median_ms`, percentile(wall, 50), 'ms', TARGET_MS);
    report('coldstart', `${kind}_max_ms`, Math.max(...wall), 'ms', TARGET_MS);
    const cpu = runs.map((r) => r.cpu).filter((ms) => ms !== undefined);
    if (cpu.length) report('coldstart', `${kind}_cpu_median_ms`, percentile(cpu, 50), 'ms');
  }
} finally {
  rmSync(parent, { recursive: true, force: true });
}
