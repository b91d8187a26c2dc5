// Ingest while `scanhub serve` deletes old events, against the same load without a deletion, in
// alternating phases of one run (bench/README.md "retention"; targets: p99 ratio <= 2, no batch
// holding the writer over 50 ms). Checks that every scan was acknowledged and stored.
import { fork } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { CUSTOMER, seededDataDir } from './events-data.js';
import { api, percentile, report } from './lib.js';
import { dropDeployment, load, login, newDeployment, provisionGateways, psql, seedPostgresEvents, startPostgres, startServe } from './stores-lib.js';

const BENCH = 'retention';
process.env.BENCH_EVENTS ??= '5000000';
const gatewayCount = Number(process.env.BENCH_GATEWAYS ?? 50);
const rate = Number(process.env.BENCH_RATE ?? 40);
const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
const finish = process.env.BENCH_FINISH === '1';
const kinds = (process.env.BENCH_STORES ?? 'sqlite,postgres').split(',');
const pg = kinds.includes('postgres') ? startPostgres(BENCH) : undefined;
const active = kinds.filter((kind) => kind === 'sqlite' || pg);
const PERIOD_DAYS = 30;

const data = await seededDataDir((metric, value, unit) => report(BENCH, `sqlite_${metric}`, value, unit));
report(BENCH, 'old_events', data.events, 'events');

/** A deployment holding the data set, fresh for this run (the deletion empties it). */
async function freshDeployment(kind) {
  if (kind === 'postgres') return seedPostgresEvents(pg, data, (metric, value, unit) => report(BENCH, `postgres_${metric}`, value, unit));
  const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-bench-retention-'));
  const started = performance.now();
  cpSync(data.dataDir, dataDir, { recursive: true });
  report(BENCH, 'sqlite_copy_seconds', (performance.now() - started) / 1000, 's');
  return { ...newDeployment('sqlite', pg, { dataDir }), owned: true };
}

/** Events left in the deployment: all of them, and those of the bench gateways. */
function counts(deployment, gatewayIds) {
  const list = gatewayIds.map((id) => `'${id}'`).join(',');
  const sql = `SELECT count(*) AS events, count(*) FILTER (WHERE gateway_id IN (${list})) AS scans FROM events`;
  if (deployment.kind === 'postgres') {
    const [events, scans] = psql(deployment.url, sql).split('|').map(Number);
    return { events, scans };
  }
  const db = new Database(join(deployment.dataDir, 'scanhub.db'), { readonly: true });
  try {
    return db.prepare(sql).get();
  } finally {
    db.close();
  }
}

/** The SQLite file's size and free pages (a read-only look while serve runs). */
function fileState(deployment) {
  const file = join(deployment.dataDir, 'scanhub.db');
  const db = new Database(file, { readonly: true });
  try {
    return { bytes: statSync(file).size, freePages: db.pragma('freelist_count', { simple: true }) };
  } finally {
    db.close();
  }
}

/** Polls GET retention until `done(retention)`; the retention then. */
async function retentionWhen(server, token, done, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const retention = await api(server.url, 'GET', `/${CUSTOMER}/retention`, token);
    if (done(retention)) return retention;
    if (Date.now() > deadline) throw new Error(`retention: still ${JSON.stringify(retention)} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function measure(kind) {
  const deployment = await freshDeployment(kind);
  const slowBatches = [];
  const server = await startServe(deployment, {
    customer: CUSTOMER,
    args: process.env.BENCH_RETENTION_RATE ? ['--retention-rate', process.env.BENCH_RETENTION_RATE] : [],
    onLog: (line) => line.msg?.startsWith('a batch of old events held the writer longer') && slowBatches.push(line.holdMs),
  });
  let generator;
  try {
    const token = await login(server.url);
    const gateways = await provisionGateways(BENCH, server.url, token, CUSTOMER, gatewayCount, 'retention');
    generator = fork(new URL('./poison-load.js', import.meta.url), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const messages = [];
    let waiting;
    generator.on('message', (message) => (waiting ? (waiting(message), (waiting = undefined)) : messages.push(message)));
    const next = () => (messages.length ? Promise.resolve(messages.shift()) : new Promise((resolve) => (waiting = resolve)));
    generator.send({ host: '127.0.0.1', port: server.mqttPort, gateways, rate });
    const connected = await next();
    if (connected.type !== 'connected') throw new Error(`load generator: ${JSON.stringify(connected)}`);
    const phase = async (name, phaseSeconds = seconds) => {
      generator.send({ phase: name, durationMs: phaseSeconds * 1000 });
      return next();
    };
    const setPeriod = (days) => api(server.url, 'PUT', `/${CUSTOMER}/retention`, token, { events_days: days });
    const before = kind === 'sqlite' ? fileState(deployment) : undefined;

    // Warm-up, not counted: connections, JIT and page cache settle in the first seconds.
    const warm = await phase('warm-up', warmupSeconds);
    const clean = [];
    const deleting = [];
    const passes = [];
    let acknowledged = warm.acknowledged;
    let sent = warm.sent;
    for (let round = 0; round < rounds; round++) {
      const quiet = await phase('clean');
      const last = (await api(server.url, 'GET', `/${CUSTOMER}/retention`, token)).last_deletion;
      await setPeriod(PERIOD_DAYS);
      const busy = await phase('deleting');
      const phaseEnd = Date.now();
      // For ever again: the pass stops within a second and records what it deleted.
      await setPeriod(null);
      const { last_deletion: pass } = await retentionWhen(server, token, (r) => r.last_deletion && r.last_deletion.finished !== last?.finished, 30_000);
      if (pass.finished < phaseEnd - 1500) console.error(`${BENCH}: ${kind}: the deletion ended ${phaseEnd - pass.finished} ms before the phase did: BENCH_EVENTS is too small for BENCH_SECONDS`);
      clean.push(quiet);
      deleting.push(busy);
      passes.push(pass);
      for (const result of [quiet, busy]) (acknowledged += result.acknowledged), (sent += result.sent);
      console.error(
        `${BENCH}: ${kind} round ${round + 1}: PUBACK p99 ${quiet.p99.toFixed(1)} ms clean, ${busy.p99.toFixed(1)} ms deleting ` +
          `(${pass.deleted} deleted in ${pass.batches} batches, longest ${pass.longest_batch_ms} ms); load ${load()}`,
      );
    }

    const deletedInRounds = passes.reduce((sum, pass) => sum + pass.deleted, 0);
    const left = counts(deployment, gateways.map((g) => g.id));
    const problems = [];
    if (acknowledged !== sent) problems.push(`${sent - acknowledged} of ${sent} scans not acknowledged`);
    if (left.scans !== acknowledged) problems.push(`${left.scans} scans stored, ${acknowledged} acknowledged`);
    if (left.events - left.scans !== data.events - deletedInRounds) problems.push(`${left.events - left.scans} old events left, ${data.events - deletedInRounds} expected`);
    if (problems.length) throw new Error(`${BENCH}: ${kind}: ${problems.join('; ')}`);

    const p = (name) => `${kind}_${name}`;
    const median = (values) => percentile(values, 50);
    for (const [name, results] of [['clean', clean], ['deleting', deleting]]) {
      report(BENCH, p(`${name}_puback_latency_p50`), median(results.map((r) => r.p50)), 'ms');
      report(BENCH, p(`${name}_puback_latency_p99`), median(results.map((r) => r.p99)), 'ms');
      report(BENCH, p(`${name}_puback_latency_max`), Math.max(...results.map((r) => r.max)), 'ms');
    }
    const ratios = deleting.map((busy, i) => busy.p99 / clean[i].p99);
    report(BENCH, p('p99_ratio_deleting_to_clean_min'), Math.min(...ratios), 'x');
    report(BENCH, p('p99_ratio_deleting_to_clean_median'), median(ratios), 'x', 2);
    report(BENCH, p('p99_ratio_deleting_to_clean_max'), Math.max(...ratios), 'x');
    report(BENCH, p('longest_batch_hold'), Math.max(...passes.map((pass) => pass.longest_batch_ms)), 'ms', 50);
    report(BENCH, p('batches_over_50ms'), slowBatches.length, `of ${passes.reduce((sum, pass) => sum + pass.batches, 0)}`);
    report(BENCH, p('deleted_per_second_while_deleting'), deletedInRounds / ((rounds * seconds) || 1), 'events/s');
    report(BENCH, p('scans_per_second'), (acknowledged - warm.acknowledged) / (rounds * 2 * seconds), 'messages/s');

    if (finish) {
      const started = Date.now();
      await setPeriod(PERIOD_DAYS);
      const { last_deletion: pass } = await retentionWhen(server, token, (r) => r.last_deletion && r.last_deletion.started >= started, 24 * 3600_000);
      report(BENCH, p('deletion_to_the_end_seconds'), (pass.finished - pass.started) / 1000, 's');
      report(BENCH, p('deletion_to_the_end_per_second'), pass.deleted / Math.max(0.001, (pass.finished - pass.started) / 1000), 'events/s');
      report(BENCH, p('deletion_to_the_end_longest_batch_hold'), pass.longest_batch_ms, 'ms', 50);
      const leftAtEnd = counts(deployment, gateways.map((g) => g.id));
      if (leftAtEnd.events !== leftAtEnd.scans) throw new Error(`${BENCH}: ${kind}: ${leftAtEnd.events - leftAtEnd.scans} old events left after the deletion ran to its end`);
      if (before) {
        const after = fileState(deployment);
        report(BENCH, p('file_mib_before'), before.bytes / 1048576, 'MiB');
        report(BENCH, p('file_mib_after'), after.bytes / 1048576, 'MiB');
        report(BENCH, p('free_pages_after'), after.freePages, 'pages of 4 KiB');
      }
    }
    generator.send('close');
  } finally {
    generator?.kill();
    await server.stop();
    dropDeployment(deployment);
  }
}

console.error(`${BENCH}: ${data.events} old events, ${gatewayCount} gateways x ${rate} messages/s, ${rounds} rounds of ${seconds} s clean + ${seconds} s deleting; load ${load()}`);
for (const kind of active) await measure(kind);
