// A reconnect storm (bench/README.md "reconnect-storm"): N provisioned gateways connect at once and
// publish once while 20 connected gateways keep publishing, against `scanhub serve`, Mosquitto and a
// bare node:tls server in turn: storm time, CPU per connection, RSS per idle connection at rest, the
// steady gateways' longest PUBACK.
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { percentile, report } from './lib.js';
import { mosquittoBinary, startBareTls, startMosquitto } from './mosquitto.js';
import { RUNS, cpuSince, cpuSnapshot, dropDeployment, load, login, newDeployment, provisionGateways, startServe } from './stores-lib.js';

const BENCH = 'reconnect-storm';
const CUSTOMER = 'bench';
const SIZES = (process.env.BENCH_STORM_SIZES ?? '1000,2000').split(',').map(Number);
const IDLE = Number(process.env.BENCH_IDLE ?? 10_000);
const KEY_TYPE = process.env.BENCH_KEY_TYPE;
const STEADY = 20;
/** Tries per gateway (the first and its retries, 1 s apart) before it counts as left out. */
const MAX_TRIES = 30;
const SERVE_ARGS = ['--provisioning-rate-limit', '1000000', ...(KEY_TYPE ? ['--gateway-key-type', KEY_TYPE] : [])];
const label = KEY_TYPE ?? 'default-key';
const BASE_BIN = process.env.BENCH_BASE_BIN;
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 25);

/** Resident set size of a process in MiB (/proc/<pid>/status VmRSS). */
function rssMiB(pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

/** The same pause for every server before each RSS reading (BENCH_SETTLE_SECONDS). */
const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_SECONDS * 1000));

/** SYNs dropped machine-wide because an accept queue was full (TcpExt ListenOverflows). */
function listenOverflows() {
  const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n').filter((line) => line.startsWith('TcpExt:'));
  const names = lines[0].split(/\s+/);
  const values = lines[1].split(/\s+/);
  return Number(values[names.indexOf('ListenOverflows')]);
}

/** A storm-client.js process of its own, given its config; `next()` resolves with its next message. */
function stormClient(config) {
  const child = fork(new URL('./storm-client.js', import.meta.url), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const messages = [];
  let waiting;
  child.on('message', (m) => (waiting ? (waiting(m), (waiting = undefined)) : messages.push(m)));
  const next = () => (messages.length ? Promise.resolve(messages.shift()) : new Promise((resolve) => (waiting = resolve)));
  child.send(config);
  return { child, next };
}

/**
 * One storm of `storm` gateways against the server `pid` listening on `port`; the `steady` gateways
 * publish from a second client process, so that the storm's handshakes in its own process do not
 * delay the reading of their PUBACKs.
 */
async function stormRun(name, size, pid, port, caPem, steady, storm) {
  const base = { host: '127.0.0.1', port, caPem, maxTries: MAX_TRIES };
  const steadyClient = stormClient({ ...base, steady, storm: [] });
  const steadyReady = await steadyClient.next();
  if (steadyReady.type !== 'ready') throw new Error(`${name}: steady client: ${JSON.stringify(steadyReady)}`);
  const client = stormClient({ ...base, steady: [], storm });
  const ready = await client.next();
  if (ready.type !== 'ready') throw new Error(`${name}: storm client: ${JSON.stringify(ready)}`);
  // Memory at rest on both sides of the storm: V8's memory reducer shrinks a heap some seconds after
  // its allocation rate falls, so a fresh serve holds its start-up garbage until then, and the
  // storm's garbage as long after it (bench/README.md "reconnect-storm").
  await settle();
  const rssBefore = rssMiB(pid);
  const cpu = cpuSnapshot([pid]);
  const overflows = listenOverflows();
  steadyClient.child.send('storm');
  client.child.send('storm');
  const result = await client.next();
  steadyClient.child.send('stop');
  const steadyResult = await steadyClient.next();
  const serverMs = cpuSince(cpu);
  await settle();
  const rssAfter = rssMiB(pid);
  const figures = {
    seconds: result.seconds,
    handshakesPerSecond: result.connected / result.seconds,
    cpuMsPerConnection: serverMs / storm.length,
    rssMiBPer1000: ((rssAfter - rssBefore) / storm.length) * 1000,
    synDrops: listenOverflows() - overflows,
    retries: result.retries,
    leftOut: result.failedForGood,
    steadyMaxPubackMs: steadyResult.steadyMaxPubackMs,
    clientCpuMsPerConnection: result.clientCpuMs / storm.length,
  };
  for (const { child } of [client, steadyClient]) {
    child.send('close');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  console.error(
    `${BENCH}: ${label} ${size} ${name}: ${figures.seconds.toFixed(2)} s, ${Math.round(figures.handshakesPerSecond)} handshakes/s, ` +
      `server ${figures.cpuMsPerConnection.toFixed(2)} CPU ms/connection, ${figures.rssMiBPer1000.toFixed(1)} MiB RSS per 1,000 idle, ` +
      `${figures.synDrops} SYNs dropped, ${figures.retries} retries, ${figures.leftOut} left out, steady PUBACK max ${figures.steadyMaxPubackMs.toFixed(0)} ms, ` +
      `client ${figures.clientCpuMsPerConnection.toFixed(2)} CPU ms/connection; load ${load()}`,
  );
  return figures;
}

const mosquitto = mosquittoBinary(BENCH);
const sizes = [...SIZES, ...(IDLE > 0 ? [IDLE] : [])];
const deployment = newDeployment('sqlite', undefined, { prefix: 'storm' });
try {
  let server = await startServe(deployment, { customer: CUSTOMER, args: SERVE_ARGS });
  const token = await login(server.url);
  const gateways = await provisionGateways(BENCH, server.url, token, CUSTOMER, STEADY + Math.max(...sizes), 'storm');
  await server.stop();
  server = undefined;
  const caPem = readFileSync(join(deployment.dataDir, 'pki', 'ca.crt'), 'utf8');
  const steady = gateways.slice(0, STEADY);
  for (const size of sizes) {
    const storm = gateways.slice(STEADY, STEADY + size);
    const runs = { scanhub: [], ...(BASE_BIN ? { 'scanhub-base': [] } : {}), 'node-tls': [], mosquitto: [] };
    const count = size === IDLE && !SIZES.includes(size) ? 1 : RUNS;
    for (let run = 0; run < count; run++) {
      // This build's serve, then the other build's (BENCH_BASE_BIN) when given.
      for (const [name, bin] of [['scanhub', undefined], ...(BASE_BIN ? [['scanhub-base', BASE_BIN]] : [])]) {
        const serve = await startServe(deployment, { customer: CUSTOMER, args: SERVE_ARGS, logLevel: 'info', bin });
        try {
          runs[name].push(await stormRun(name, size, serve.pid, serve.mqttPort, caPem, steady, storm));
        } finally {
          await serve.stop();
        }
      }
      const bare = await startBareTls(deployment.dataDir);
      try {
        runs['node-tls'].push(await stormRun('node-tls', size, bare.pid, bare.port, caPem, steady, storm));
      } finally {
        await bare.stop();
      }
      if (!mosquitto) continue;
      const broker = await startMosquitto(mosquitto, deployment.dataDir);
      try {
        runs.mosquitto.push(await stormRun('mosquitto', size, broker.pid, broker.port, caPem, steady, storm));
      } finally {
        await broker.stop();
      }
    }
    const prefix = `${label}_${size}`;
    const medians = {};
    for (const [side, list] of Object.entries(runs)) {
      if (list.length === 0) continue;
      const median = (key) => percentile(list.map((figures) => figures[key]), 50);
      medians[side] = { seconds: median('seconds'), cpu: median('cpuMsPerConnection'), rss: median('rssMiBPer1000') };
      report(BENCH, `${prefix}_${side}_storm_seconds_min`, Math.min(...list.map((f) => f.seconds)), 's');
      report(BENCH, `${prefix}_${side}_storm_seconds_median`, medians[side].seconds, 's');
      report(BENCH, `${prefix}_${side}_storm_seconds_max`, Math.max(...list.map((f) => f.seconds)), 's');
      report(BENCH, `${prefix}_${side}_handshakes_per_second_median`, median('handshakesPerSecond'), '1/s');
      report(BENCH, `${prefix}_${side}_cpu_ms_per_connection_median`, medians[side].cpu, 'ms');
      report(BENCH, `${prefix}_${side}_rss_mib_per_1000_idle_median`, medians[side].rss, 'MiB', side === 'scanhub' ? 35 : undefined);
      report(BENCH, `${prefix}_${side}_syn_drops_max`, Math.max(...list.map((f) => f.synDrops)), 'SYNs');
      report(BENCH, `${prefix}_${side}_left_out_max`, Math.max(...list.map((f) => f.leftOut)), 'gateways', side === 'scanhub' ? 0 : undefined);
      report(BENCH, `${prefix}_${side}_retries_median`, median('retries'), 'gateways');
      report(BENCH, `${prefix}_${side}_steady_puback_max_ms`, Math.max(...list.map((f) => f.steadyMaxPubackMs)), 'ms', side === 'scanhub' ? 1000 : undefined);
    }
    if (medians.scanhub && medians.mosquitto) {
      report(BENCH, `${prefix}_storm_seconds_ratio_scanhub_to_mosquitto`, medians.scanhub.seconds / medians.mosquitto.seconds, 'x', 1.0, '<=');
      report(BENCH, `${prefix}_cpu_per_connection_ratio_scanhub_to_mosquitto`, medians.scanhub.cpu / medians.mosquitto.cpu, 'x', 1.5, '<=');
    }
    if (medians.scanhub && medians['scanhub-base']) {
      report(BENCH, `${prefix}_storm_seconds_ratio_scanhub_to_base`, medians.scanhub.seconds / medians['scanhub-base'].seconds, 'x');
    }
    if (medians.scanhub && medians['node-tls']) {
      report(BENCH, `${prefix}_cpu_per_connection_ratio_scanhub_to_node_tls`, medians.scanhub.cpu / medians['node-tls'].cpu, 'x');
      report(BENCH, `${prefix}_rss_per_1000_idle_ratio_scanhub_to_node_tls`, medians.scanhub.rss / medians['node-tls'].rss, 'x');
    }
  }
} finally {
  dropDeployment(deployment);
}
report(BENCH, 'load_average_1m_at_end', Number(load().split(' ')[0]), 'load');
