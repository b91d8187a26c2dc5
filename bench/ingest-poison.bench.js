// Ingest while one gateway sends poison as fast as it can (bench/README.md "ingest-poison"): the
// other gateways' PUBACK latency clean and with poison (target p99 < 250 ms), /healthz, and checks
// that every scan was stored, no poison was, and the writer thread never died.
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { request } from 'undici';
import { startServeProcess } from './events-data.js';
import { api, report } from './lib.js';
import { provisionGateways } from './stores-lib.js';

const BENCH = 'ingest-poison';
const gatewayCount = Number(process.env.BENCH_GATEWAYS ?? 50);
const rate = Number(process.env.BENCH_RATE ?? 40);
const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const poisonWindow = Number(process.env.BENCH_POISON_WINDOW ?? 16);
const CUSTOMER = 'bench';
const PASSWORD = 'bench-password-123';

/** CPU ms (user + system, all threads) the process used so far (Linux /proc; 100 ticks per second). */
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Polls /healthz every 100 ms until stopped; resolves with the answers other than 200 and the count. */
function pollHealth(url) {
  let polling = true;
  const done = (async () => {
    let samples = 0;
    let unhealthy = 0;
    while (polling) {
      const response = await request(`${url}/healthz`).catch(() => undefined);
      await response?.body.text();
      samples++;
      if (response?.statusCode !== 200) unhealthy++;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return { samples, unhealthy };
  })();
  return () => ((polling = false), done);
}

const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-bench-poison-'));
process.env.SCANHUB_ADMIN_PASSWORD = PASSWORD;
process.env.SCANHUB_CUSTOMER_ID = CUSTOMER;
const crashes = [];
const server = await startServeProcess(dataDir, (line) => line.msg?.includes('thread crashed') && crashes.push(line));
let load;
try {
  const { id_token: token } = await api(server.url, 'POST', '/auth/login', undefined, { email: 'admin@localhost', password: PASSWORD });
  const gateways = await provisionGateways(BENCH, server.url, token, CUSTOMER, gatewayCount, 'bench');
  const [poisonGateway] = await provisionGateways(BENCH, server.url, token, CUSTOMER, 1, 'bench-poison');

  load = fork(new URL('./poison-load.js', import.meta.url), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const messages = [];
  let waiting;
  load.on('message', (message) => (waiting ? (waiting(message), (waiting = undefined)) : messages.push(message)));
  const next = () => (messages.length ? Promise.resolve(messages.shift()) : new Promise((resolve) => (waiting = resolve)));
  load.send({ host: '127.0.0.1', port: server.mqttPort, gateways, poisonGateway, rate, poisonWindow });
  const connected = await next();
  if (connected.type !== 'connected') throw new Error(`load generator: ${JSON.stringify(connected)}`);

  const results = {};
  for (const phase of ['clean', 'poison']) {
    const stopPolling = pollHealth(server.url);
    const cpuStart = cpuMs(server.pid);
    load.send({ phase, durationMs: seconds * 1000 });
    const result = await next();
    result.serverCpu = (cpuMs(server.pid) - cpuStart) / result.elapsedMs;
    result.health = await stopPolling();
    results[phase] = result;
  }
  load.send('close');

  const db = new Database(join(dataDir, 'scanhub.db'), { readonly: true });
  const stored = db.prepare('SELECT count(*) FROM events WHERE gateway_id != ?').pluck().get(poisonGateway.id);
  const poisonStored = db.prepare('SELECT count(*) FROM events WHERE gateway_id = ?').pluck().get(poisonGateway.id);
  db.close();
  const acknowledged = results.clean.acknowledged + results.poison.acknowledged;
  const sent = results.clean.sent + results.poison.sent;
  const problems = [];
  if (acknowledged !== sent) problems.push(`${sent - acknowledged} of ${sent} scans not acknowledged`);
  if (stored !== acknowledged) problems.push(`${stored} scans stored, ${acknowledged} acknowledged`);
  if (poisonStored !== 0) problems.push(`${poisonStored} poison events stored`);
  if (crashes.length) problems.push(`writer thread died ${crashes.length} times: ${crashes[0].err?.message}`);
  if (results.clean.closed + results.poison.closed) problems.push(`${results.clean.closed + results.poison.closed} connections closed`);
  // BENCH_SKIP_VERIFY: report the figures all the same (to measure a build without the limits).
  if (problems.length && !process.env.BENCH_SKIP_VERIFY) throw new Error(`ingest-poison: ${problems.join('; ')}`);
  if (problems.length) console.error(`ingest-poison: ${problems.join('; ')}`);

  const poison = results.poison;
  console.error(
    `ingest-poison: ${gatewayCount} gateways x ${rate} msg/s, ${seconds} s per phase; ${acknowledged} scans acknowledged and stored; ` +
      `${poison.poisonAcknowledged} poison messages (${(poison.poisonBytes / 1048576).toFixed(0)} MiB) acknowledged, ${poisonStored} events of them stored; ${crashes.length} writer thread deaths`,
  );
  for (const [phase, result] of Object.entries(results)) {
    report(BENCH, `${phase}_puback_latency_p50`, result.p50, 'ms');
    report(BENCH, `${phase}_puback_latency_p99`, result.p99, 'ms', phase === 'poison' ? 250 : undefined);
    report(BENCH, `${phase}_puback_latency_max`, result.max, 'ms');
    report(BENCH, `${phase}_scans_per_second`, result.acknowledged / (result.elapsedMs / 1000), 'messages/s');
    report(BENCH, `${phase}_server_cpu`, result.serverCpu * 100, '% of one core');
    report(BENCH, `${phase}_healthz_not_200`, result.health.unhealthy, `of ${result.health.samples}`);
  }
  report(BENCH, 'poison_messages_per_second', poison.poisonAcknowledged / (poison.elapsedMs / 1000), 'messages/s');
  report(BENCH, 'poison_megabytes_per_second', poison.poisonBytes / 1048576 / (poison.elapsedMs / 1000), 'MiB/s');
} finally {
  load?.kill();
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
