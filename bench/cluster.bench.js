// Two `scanhub serve` instances on one PostgreSQL behind HAProxy (deploy/haproxy.cfg as shipped)
// against one instance without a balancer, same load (bench/README.md "cluster"): ingest with each
// process's CPU per event, then the failover time after a SIGKILL of one instance.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mqtt from 'mqtt';
import { request } from 'undici';
import { percentile, report } from './lib.js';
import {
  RUNS, benchGateways, cpuSince, cpuSnapshot, dropDeployment, forkGenerator, load, newDeployment, postgresPids, psql, startPostgres, startServe,
} from './stores-lib.js';

const BENCH = 'cluster';
const HAPROXY_CFG = fileURLToPath(new URL('../deploy/haproxy.cfg', import.meta.url));
const customer = 'bench';
const gatewayCount = Number(process.env.BENCH_GATEWAYS ?? 200);
const window = Number(process.env.BENCH_WINDOW ?? 16);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const failoverGateways = Number(process.env.BENCH_FAILOVER_GATEWAYS ?? 100);
const reconnectMs = Number(process.env.BENCH_RECONNECT_MS ?? 500);
const BALANCER = '127.0.0.1';
const INSTANCES = ['127.0.0.2', '127.0.0.3'];

const pg = startPostgres(BENCH);
if (!pg) process.exit(0);

/** A port free on every host a moment ago. */
async function freePort(hostList) {
  const hosts = [...new Set(hostList)];
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 40_000);
    const held = [];
    for (const host of hosts) {
      const server = await new Promise((resolve) => {
        const s = createServer();
        s.once('error', () => resolve(undefined));
        s.listen(port, host, () => resolve(s));
      });
      if (!server) break;
      held.push(server);
    }
    await Promise.all(held.map((s) => new Promise((resolve) => s.close(resolve))));
    if (held.length === hosts.length) return port;
  }
}

/** Waits for `check` to hold, polling (HAProxy announces no state change). */
async function until(check, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Two instances and HAProxy on one database; or one instance alone (`balanced` false). */
async function startDeployment(balanced) {
  const deployment = newDeployment('postgres', pg, { prefix: balanced ? 'cluster' : 'single' });
  const blobDir = mkdtempSync(join(tmpdir(), 'scanhub-bench-blobs-'));
  const hosts = balanced ? INSTANCES : [BALANCER];
  const [apiPort, mqttPort, statsPort] = [await freePort([BALANCER, ...hosts]), await freePort([BALANCER, ...hosts]), await freePort([BALANCER])];
  const publicUrl = `http://${BALANCER}:${apiPort}`;
  const dataDirs = [];
  const instances = await Promise.all(
    hosts.map((host) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-bench-instance-'));
      dataDirs.push(dataDir);
      const args = ['--host', host, '--port', String(apiPort), '--mqtt-port', String(mqttPort), '--blob-dir', blobDir, '--mqtt-public-host', 'localhost'];
      if (balanced) args.push('--public-url', publicUrl, '--trust-proxy', BALANCER, '--mqtt-proxy-protocol');
      return startServe(deployment, { customer, logLevel: 'warn', dataDir, args });
    }),
  );
  let haproxy;
  if (balanced) {
    haproxy = spawn('haproxy', ['-db', '-f', HAPROXY_CFG], {
      env: {
        ...process.env,
        SCANHUB_LB_API: `${BALANCER}:${apiPort}`,
        SCANHUB_LB_MQTT: `${BALANCER}:${mqttPort}`,
        SCANHUB_LB_STATS: `${BALANCER}:${statsPort}`,
        SCANHUB_1_API: `${INSTANCES[0]}:${apiPort}`,
        SCANHUB_2_API: `${INSTANCES[1]}:${apiPort}`,
        SCANHUB_1_MQTT: `${INSTANCES[0]}:${mqttPort}`,
        SCANHUB_2_MQTT: `${INSTANCES[1]}:${mqttPort}`,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    haproxy.stderr.on('data', (chunk) => (log += chunk));
    haproxy.once('exit', (code) => code && console.error(`${BENCH}: haproxy exited with ${code}: ${log.slice(-2000)}`));
    // Every server line UP in the stats (CSV: pxname, svname, ..., status is the 18th field).
    await until(async () => {
      const response = await request(`http://${BALANCER}:${statsPort}/;csv`);
      const rows = (await response.body.text()).split('\n').map((line) => line.split(','));
      const servers = rows.filter((row) => /^scanhub\d$/.test(row[1] ?? ''));
      return servers.length === 4 && servers.every((row) => row[17] === 'UP');
    }, 'HAProxy to report every server UP');
  }
  return {
    deployment,
    instances,
    haproxy,
    mqtt: { host: balanced ? BALANCER : hosts[0], port: mqttPort },
    async close() {
      if (haproxy && haproxy.exitCode === null) {
        const exited = new Promise((resolve) => haproxy.once('exit', resolve));
        haproxy.kill('SIGTERM');
        await exited;
      }
      await Promise.all(instances.map((instance) => instance.stop()));
      dropDeployment(deployment);
      for (const dir of [blobDir, ...dataDirs]) rmSync(dir, { recursive: true, force: true });
    },
  };
}

const storedEvents = (deployment) => Number(psql(deployment.url, 'SELECT count(*) FROM events'));

/** The lean generator through `target`; figures of throughput, latency and CPU per process. */
async function ingest(running) {
  const { deployment, instances, haproxy } = running;
  const gateways = await benchGateways(deployment, customer, gatewayCount, 'ingest');
  const generator = forkGenerator(running.mqtt, gateways, { window, warmupSeconds, seconds });
  const { next } = generator;
  const connected = await next();
  if (connected.type !== 'connected') throw new Error(`load generator: ${JSON.stringify(connected)}`);
  const pgPids = postgresPids(pg);
  const snapshots = {
    instances: instances.map((instance) => cpuSnapshot([instance.pid])),
    postgres: cpuSnapshot(pgPids),
    haproxy: haproxy ? cpuSnapshot([haproxy.pid]) : undefined,
    generator: cpuSnapshot([generator.pid]),
  };
  generator.start();
  const result = await next();
  const per1000 = (ms) => (ms / result.acked) * 1000;
  const figures = {
    eventsPerSecond: result.ackedInWindow / (result.elapsedMs / 1000),
    p50: result.p50,
    p99: result.p99,
    instanceCpu: snapshots.instances.map((snapshot) => per1000(cpuSince(snapshot))),
    postgresCpu: per1000(cpuSince(snapshots.postgres, postgresPids(pg))),
    haproxyCpu: snapshots.haproxy ? per1000(cpuSince(snapshots.haproxy)) : 0,
    generatorCpu: per1000(cpuSince(snapshots.generator)),
  };
  generator.kill();
  const stored = storedEvents(deployment);
  if (stored !== result.acked) throw new Error(`${result.acked} messages acknowledged but ${stored} events stored`);
  return figures;
}

/** Failover: mqtt.js gateways through the balancer, one instance killed; seconds until all publish again. */
async function failover(running) {
  const { deployment, instances } = running;
  const gateways = await benchGateways(deployment, customer, failoverGateways, 'failover');
  const acked = new Set();
  let killedAt = 0;
  let watching = false;
  const states = gateways.list.map(() => ({ lostAt: 0, backAt: 0 }));
  const clients = gateways.list.map((gateway, i) => {
    const client = mqtt.connect(`mqtts://${running.mqtt.host}:${running.mqtt.port}`, {
      key: gateway.keyPem,
      cert: gateway.certPem,
      ca: gateways.ca.certPem,
      servername: 'localhost',
      protocolVersion: 4,
      clientId: gateway.id,
      reconnectPeriod: reconnectMs,
      connectTimeout: 5_000,
    });
    client.on('close', () => {
      if (watching && !states[i].lostAt) states[i].lostAt = Date.now();
    });
    client.on('error', () => {});
    return client;
  });
  await Promise.all(clients.map((client) => (client.connected ? undefined : new Promise((resolve) => client.once('connect', resolve)))));
  let sequence = 0;
  const timers = clients.map((client, i) =>
    setInterval(() => {
      const id = randomUUID();
      sequence++;
      client.publish(gateways.list[i].topic, JSON.stringify({ id, type: 'scan', scan_code: `F-${sequence}`, created: Date.now() }), { qos: 1 }, (error) => {
        if (error) return;
        acked.add(id);
        if (states[i].lostAt && !states[i].backAt) states[i].backAt = Date.now();
      });
    }, 200),
  );
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  killedAt = Date.now();
  watching = true;
  await instances[0].kill();
  // Gateways on the killed instance lose their connection as HAProxy closes it; wait until every
  // one of those publishes again (or 60 s).
  await until(async () => {
    const lost = states.filter((state) => state.lostAt);
    return lost.length > 0 && lost.every((state) => state.backAt);
  }, 'every gateway of the killed instance to publish again', 60_000);
  watching = false;
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  timers.forEach(clearInterval);
  await Promise.all(clients.map((client) => client.endAsync()));
  const lost = states.filter((state) => state.lostAt);
  const recovery = lost.map((state) => state.backAt - killedAt);
  const storedIds = new Set(psql(deployment.url, 'SELECT id FROM events').split('\n'));
  const missing = [...acked].filter((id) => !storedIds.has(id)).length;
  if (missing) throw new Error(`${missing} acknowledged events missing after the kill`);
  return { moved: lost.length, allBackMs: Math.max(...recovery), medianBackMs: percentile(recovery, 50), acked: acked.size };
}

const summary = (values) => ({ min: Math.min(...values), median: percentile(values, 50), max: Math.max(...values) });
function reportSpread(metric, values, unit, target, cmp) {
  const { min, median, max } = summary(values);
  report(BENCH, `${metric}_min`, min, unit);
  report(BENCH, `${metric}_median`, median, unit, target, cmp);
  report(BENCH, `${metric}_max`, max, unit);
  console.error(`${BENCH} ${metric} (${unit}): [${values.map((v) => Math.round(v * 10) / 10).join(', ')}]`);
}

try {
  const runs = { cluster: [], single: [], failover: [] };
  for (let run = 0; run < RUNS; run++) {
    for (const balanced of [true, false]) {
      const running = await startDeployment(balanced);
      try {
        const figures = await ingest(running);
        runs[balanced ? 'cluster' : 'single'].push(figures);
        console.error(
          `${BENCH}: ${balanced ? 'two instances + HAProxy' : 'one instance'}: ${Math.round(figures.eventsPerSecond)} events/s, PUBACK p50 ${figures.p50.toFixed(1)} ms p99 ${figures.p99.toFixed(1)} ms; ` +
            `CPU ms/1000 events: instances ${figures.instanceCpu.map((v) => v.toFixed(0)).join(' + ')}, postgres ${figures.postgresCpu.toFixed(0)}, haproxy ${figures.haproxyCpu.toFixed(0)}, generator ${figures.generatorCpu.toFixed(0)}; load ${load()}`,
        );
        if (balanced) {
          const result = await failover(running);
          runs.failover.push(result);
          console.error(`${BENCH}: failover: ${result.moved} gateways moved, all publishing again ${result.allBackMs} ms after kill -9 (median ${result.medianBackMs} ms), ${result.acked} acknowledged, none missing`);
        }
      } finally {
        await running.close();
      }
    }
  }
  console.error(`${BENCH}: ${gatewayCount} gateways, window ${window}, QoS 1, mTLS, ${seconds}s after ${warmupSeconds}s warm-up, ${RUNS} runs; PostgreSQL, HAProxy, instances and generator on one ${(await import('node:os')).availableParallelism()}-core machine`);
  const pick = (kind, field) => runs[kind].map((figures) => figures[field]);
  reportSpread('cluster_events_per_second', pick('cluster', 'eventsPerSecond'), 'events/s');
  reportSpread('single_events_per_second', pick('single', 'eventsPerSecond'), 'events/s');
  report(BENCH, 'events_per_second_ratio_cluster_to_single', percentile(pick('cluster', 'eventsPerSecond'), 50) / percentile(pick('single', 'eventsPerSecond'), 50), 'x');
  reportSpread('cluster_puback_p99', pick('cluster', 'p99'), 'ms');
  reportSpread('single_puback_p99', pick('single', 'p99'), 'ms');
  reportSpread('cluster_puback_p50', pick('cluster', 'p50'), 'ms');
  reportSpread('cluster_instance_cpu_ms_per_1000_events', runs.cluster.map((f) => f.instanceCpu.reduce((a, b) => a + b, 0)), 'ms');
  reportSpread('single_instance_cpu_ms_per_1000_events', runs.single.map((f) => f.instanceCpu[0]), 'ms');
  reportSpread('cluster_postgres_cpu_ms_per_1000_events', pick('cluster', 'postgresCpu'), 'ms');
  reportSpread('single_postgres_cpu_ms_per_1000_events', pick('single', 'postgresCpu'), 'ms');
  reportSpread('cluster_haproxy_cpu_ms_per_1000_events', pick('cluster', 'haproxyCpu'), 'ms');
  reportSpread('failover_all_publishing_again', runs.failover.map((r) => r.allBackMs), 'ms');
  report(BENCH, 'load_average_1m_at_end', Number(load().split(' ')[0]), 'load');
} finally {
  pg.stop();
}
