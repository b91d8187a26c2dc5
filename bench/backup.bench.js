// `scanhub operator backup` while `serve` ingests over the 10 M-event data set (bench/README.md
// "backup"): ingest alone, during the backup and after, the backup's size and time, the WAL's
// growth, and the restore. What it adds is deleted at the end, so the cached data set stays as seeded.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../dist/store/sqlite/open.js';
import { report } from './lib.js';
import { CUSTOMER, seededDataDir } from './events-data.js';
import { benchGateways, cpuMs, forkGenerator, load, startServe, summarize } from './stores-lib.js';

const BENCH = 'backup';
const BIN = fileURLToPath(new URL('../bin/scanhub.js', import.meta.url));
const runs = Number(process.env.BENCH_RUNS ?? 3);
const gatewayCount = Number(process.env.BENCH_GATEWAYS ?? 200);
const window = Number(process.env.BENCH_WINDOW ?? 16);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const workDir = mkdtempSync(join(process.env.BENCH_BACKUP_DIR ?? tmpdir(), 'scanhub-bench-backup-'));
const PREFIX = 'bench-backup';

const data = await seededDataDir((metric, value, unit) => report(BENCH, metric, value, unit));
report(BENCH, 'events_stored', data.events, 'events');
const deployment = { kind: 'sqlite', dataDir: data.dataDir, locator: { kind: 'sqlite', file: join(data.dataDir, 'scanhub.db'), dataDir: data.dataDir } };
const walFile = join(data.dataDir, 'scanhub.db-wal');
const walBytes = () => statSync(walFile, { throwIfNoEntry: false })?.size ?? 0;

/** Runs the CLI as a process; resolves with its exit code, stderr, wall time and CPU time (ms, sampled every 50 ms until its exit). */
function cli(args) {
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let cpu = 0;
  const sampler = setInterval(() => (cpu = Math.max(cpu, cpuMs(child.pid))), 50);
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearInterval(sampler);
      resolve({ code, stderr, ms: performance.now() - started, cpuMs: cpu });
    }),
  );
}

/** What ingest did between two marks of the load generator. */
const phase = (from, to) => ({ eventsPerSecond: (to.acked - from.acked) / ((to.at - from.at) / 1000), p99: to.p99 });

/** Removes what the runs added to the cached data set (serve stopped): events after the seeded month, the bench gateways. */
function cleanUp() {
  const db = openDatabase(join(data.dataDir, 'scanhub.db'), { migrate: false });
  try {
    db.prepare('DELETE FROM events WHERE customer_id = ? AND created >= ?').run(CUSTOMER, data.end);
    db.prepare('DELETE FROM gateways WHERE customer_id = ? AND name LIKE ?').run(CUSTOMER, `${PREFIX}-%`);
  } finally {
    db.close();
  }
}

async function oneRun(run) {
  const server = await startServe(deployment, { customer: CUSTOMER, logLevel: 'warn' });
  const output = join(workDir, `backup-${run}.tar`);
  const restored = join(workDir, `restored-${run}`);
  try {
    const gateways = await benchGateways(deployment, CUSTOMER, gatewayCount, `${PREFIX}-${run}`);
    // Long enough for every phase; ended by kill() once they are measured.
    const generator = forkGenerator({ host: '127.0.0.1', port: server.mqttPort }, gateways, { window, warmupSeconds, seconds: 24 * 3600 });
    const connected = await generator.next();
    if (connected.type !== 'connected') throw new Error(`load generator: ${JSON.stringify(connected)}`);
    generator.start();
    const mark = () => generator.mark();
    const pause = (s) => new Promise((resolve) => setTimeout(resolve, s * 1000));
    await pause(warmupSeconds);

    const m0 = await mark();
    await pause(seconds);
    const m1 = await mark();
    let walMax = walBytes();
    const sampler = setInterval(() => (walMax = Math.max(walMax, walBytes())), 100);
    const backup = await cli(['operator', '--data-dir', data.dataDir, 'backup', '--output', output]);
    clearInterval(sampler);
    const walAtEnd = walBytes();
    const m2 = await mark();
    await pause(seconds);
    const m3 = await mark();
    const walAfter = walBytes();
    generator.kill();
    if (backup.code !== 0) throw new Error(`backup exited ${backup.code}: ${backup.stderr}`);

    const restore = await cli(['operator', '--data-dir', restored, 'restore', output]);
    if (restore.code !== 0) throw new Error(`restore exited ${restore.code}: ${restore.stderr}`);
    const databaseBytes = statSync(join(restored, 'scanhub.db')).size;
    const before = phase(m0, m1);
    const during = phase(m1, m2);
    const after = phase(m2, m3);
    const figures = {
      aloneEventsPerSecond: (before.eventsPerSecond + after.eventsPerSecond) / 2,
      duringEventsPerSecond: during.eventsPerSecond,
      ratio: during.eventsPerSecond / ((before.eventsPerSecond + after.eventsPerSecond) / 2),
      aloneP99: Math.max(before.p99, after.p99),
      duringP99: during.p99,
      backupSeconds: backup.ms / 1000,
      backupCpuSeconds: backup.cpuMs / 1000,
      backupMbPerSecond: databaseBytes / 1e6 / (backup.ms / 1000),
      fileMb: statSync(output).size / 1e6,
      walMbMax: Math.max(walMax, walAtEnd) / 1e6,
      walMbAfter: walAfter / 1e6,
      restoreSeconds: restore.ms / 1000,
    };
    console.error(
      `${BENCH}: run ${run + 1}: ingest ${Math.round(before.eventsPerSecond)} events/s before, ${Math.round(during.eventsPerSecond)} during the backup, ` +
        `${Math.round(after.eventsPerSecond)} after (PUBACK p99 ${before.p99.toFixed(1)} / ${during.p99.toFixed(1)} / ${after.p99.toFixed(1)} ms); ` +
        `backup ${figures.backupSeconds.toFixed(1)} s (${figures.backupCpuSeconds.toFixed(1)} s CPU) of a ${(databaseBytes / 1e6).toFixed(0)} MB database (WAL up to ${figures.walMbMax.toFixed(0)} MB, ${figures.walMbAfter.toFixed(0)} MB ${seconds} s later), ` +
        `restore ${figures.restoreSeconds.toFixed(1)} s; load ${load()}`,
    );
    return figures;
  } finally {
    await server.stop();
    rmSync(output, { force: true });
    rmSync(restored, { recursive: true, force: true });
  }
}

try {
  cleanUp();
  const results = [];
  for (let run = 0; run < runs; run++) results.push(await oneRun(run));
  console.error(`${BENCH}: ${data.events} events, ${gatewayCount} gateways, window ${window}, QoS 1, mTLS, ${seconds}s alone before and after each backup, ${runs} runs`);
  const metrics = [
    ['ingest_alone', 'events/s', 'aloneEventsPerSecond'],
    ['ingest_during_backup', 'events/s', 'duringEventsPerSecond'],
    ['ingest_ratio_during_to_alone', 'x', 'ratio'],
    ['puback_p99_alone', 'ms', 'aloneP99'],
    ['puback_p99_during_backup', 'ms', 'duringP99'],
    ['backup_seconds', 's', 'backupSeconds'],
    ['backup_cpu_seconds', 's', 'backupCpuSeconds'],
    ['backup_rate', 'MB/s', 'backupMbPerSecond'],
    ['backup_file', 'MB', 'fileMb'],
    ['wal_max_during_backup', 'MB', 'walMbMax'],
    ['wal_after_backup', 'MB', 'walMbAfter'],
    ['restore_seconds', 's', 'restoreSeconds'],
  ];
  for (const [metric, unit, field] of metrics) summarize(BENCH, metric, unit, { sqlite: results.map((r) => r[field]) });
} finally {
  cleanUp();
  rmSync(workDir, { recursive: true, force: true });
}
