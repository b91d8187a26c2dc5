// MQTT ingest of the real `scanhub serve` against Mosquitto and a bare node:tls responder, side by
// side in one run with the same lean generator and the same device credentials (bench/README.md
// "ingest-vs-mosquitto"; targets: events/s ratio >= 1.0, p99 ratio <= 1.0).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../dist/store/sqlite/open.js';
import { percentile, report } from './lib.js';
import { mosquittoBinary, startBareTls, startMosquitto } from './mosquitto.js';
import { RUNS, cpuSince, cpuSnapshot, forkGenerator, load, login, newDeployment, dropDeployment, provisionGateways, startServe } from './stores-lib.js';

/** A rollout from one address: the per-address limit on POST /provisioning raised, as its operator would. */
const RATE_ARGS = ['--provisioning-rate-limit', '1000000'];
const BENCH = 'ingest-vs-mosquitto';
const CUSTOMER = 'bench';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const SHAPES = (process.env.BENCH_SHAPES ?? '200x20,2000x1').split(',').map((shape) => {
  const [gateways, window] = shape.split('x').map(Number);
  if (!(gateways > 0 && window > 0)) throw new Error(`BENCH_SHAPES: "${shape}" is not <gateways>x<in flight>`);
  return { gateways, window, name: shape };
});

/** Events stored in the SQLite deployment. */
function storedEvents(deployment) {
  const db = openDatabase(join(deployment.dataDir, 'scanhub.db'), { readonly: true });
  try {
    return db.prepare('SELECT count(*) FROM events').pluck().get();
  } finally {
    db.close();
  }
}

/** One measured run of the generator against `port`, with the server process `pid`. */
async function measure(label, pid, port, ca, gateways, shape) {
  const generator = forkGenerator({ host: '127.0.0.1', port }, { ca, list: gateways }, { window: shape.window, warmupSeconds: WARMUP_SECONDS, seconds: SECONDS });
  const connected = await generator.next();
  if (connected.type !== 'connected') throw new Error(`${label}: load generator: ${JSON.stringify(connected)}`);
  const cpu = cpuSnapshot([pid]);
  generator.start();
  const result = await generator.next();
  const serverMs = cpuSince(cpu);
  generator.kill();
  const figures = {
    eventsPerSecond: result.ackedInWindow / (result.elapsedMs / 1000),
    p50: result.p50,
    p99: result.p99,
    acked: result.acked,
    serverCpuPer1000: (serverMs / result.acked) * 1000,
    generatorCpuPer1000: (result.cpuMs / result.acked) * 1000,
  };
  console.error(
    `${BENCH}: ${shape.name} ${label}: ${Math.round(figures.eventsPerSecond)} events/s, PUBACK p50 ${figures.p50.toFixed(1)} ms p99 ${figures.p99.toFixed(1)} ms, ` +
      `server ${figures.serverCpuPer1000.toFixed(1)} CPU ms/1000, generator ${figures.generatorCpuPer1000.toFixed(1)} CPU ms/1000; load ${load()}`,
  );
  return figures;
}

const spread = (values) => (Math.max(...values) - Math.min(...values)) / percentile(values, 50);

const mosquitto = mosquittoBinary(BENCH);
for (const shape of SHAPES) {
  const deployment = newDeployment('sqlite', undefined, { prefix: 'vs-mosquitto' });
  try {
    let server = await startServe(deployment, { customer: CUSTOMER, args: RATE_ARGS });
    const token = await login(server.url);
    const gateways = await provisionGateways(BENCH, server.url, token, CUSTOMER, shape.gateways, `vs-${shape.name}`);
    const ca = { certPem: readFileSync(join(deployment.dataDir, 'pki', 'ca.crt'), 'utf8') };
    const runs = { scanhub: [], 'node-tls': [], mosquitto: [] };
    for (let run = 0; run < RUNS; run++) {
      if (!server) server = await startServe(deployment, { customer: CUSTOMER, args: RATE_ARGS });
      const before = storedEvents(deployment);
      const figures = await measure('scanhub', server.pid, server.mqttPort, ca, gateways, shape);
      await server.stop();
      server = undefined;
      const stored = storedEvents(deployment) - before;
      if (stored !== figures.acked) throw new Error(`scanhub: ${figures.acked} messages acknowledged but ${stored} events stored`);
      runs.scanhub.push(figures);
      const bare = await startBareTls(deployment.dataDir);
      try {
        runs['node-tls'].push(await measure('node-tls', bare.pid, bare.port, ca, gateways, shape));
      } finally {
        await bare.stop();
      }
      if (mosquitto) {
        const broker = await startMosquitto(mosquitto, deployment.dataDir);
        try {
          runs.mosquitto.push(await measure('mosquitto', broker.pid, broker.port, ca, gateways, shape));
        } finally {
          await broker.stop();
        }
      }
    }
    const prefix = `g${shape.gateways}_w${shape.window}`;
    const medians = {};
    for (const [side, list] of Object.entries(runs)) {
      if (list.length === 0) continue;
      const of = (key) => list.map((figures) => figures[key]);
      medians[side] = { eventsPerSecond: percentile(of('eventsPerSecond'), 50), p99: percentile(of('p99'), 50) };
      report(BENCH, `${prefix}_${side}_events_per_second_min`, Math.min(...of('eventsPerSecond')), 'events/s');
      report(BENCH, `${prefix}_${side}_events_per_second_median`, medians[side].eventsPerSecond, 'events/s');
      report(BENCH, `${prefix}_${side}_events_per_second_max`, Math.max(...of('eventsPerSecond')), 'events/s');
      report(BENCH, `${prefix}_${side}_events_per_second_spread`, spread(of('eventsPerSecond')), 'x');
      report(BENCH, `${prefix}_${side}_puback_p50_median`, percentile(of('p50'), 50), 'ms');
      report(BENCH, `${prefix}_${side}_puback_p99_median`, medians[side].p99, 'ms');
      report(BENCH, `${prefix}_${side}_server_cpu_ms_per_1000_median`, percentile(of('serverCpuPer1000'), 50), 'ms');
      report(BENCH, `${prefix}_${side}_generator_cpu_ms_per_1000_median`, percentile(of('generatorCpuPer1000'), 50), 'ms');
    }
    if (medians.mosquitto) {
      report(BENCH, `${prefix}_events_per_second_ratio_scanhub_to_mosquitto`, medians.scanhub.eventsPerSecond / medians.mosquitto.eventsPerSecond, 'x', 1.0, '>=');
      report(BENCH, `${prefix}_puback_p99_ratio_scanhub_to_mosquitto`, medians.scanhub.p99 / medians.mosquitto.p99, 'x', 1.0, '<=');
    }
    if (medians['node-tls']) {
      report(BENCH, `${prefix}_events_per_second_ratio_scanhub_to_node_tls`, medians.scanhub.eventsPerSecond / medians['node-tls'].eventsPerSecond, 'x');
      if (medians.mosquitto) report(BENCH, `${prefix}_events_per_second_ratio_node_tls_to_mosquitto`, medians['node-tls'].eventsPerSecond / medians.mosquitto.eventsPerSecond, 'x');
    }
    if (server) await server.stop();
  } finally {
    dropDeployment(deployment);
  }
}
report(BENCH, 'load_average_1m_at_end', Number(load().split(' ')[0]), 'load');
