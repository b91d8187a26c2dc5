// Commands to gateways (bench/README.md "commands", docs/commands.md), against `scanhub serve`
// started from the CLI, the gateways in a process of their own (commands-client.js):
// 1. delivery: 2,000 connected, subscribed gateways, one command each in 2 bulk calls of 1,000:
//    until every one is DELIVERED in the store, and create-to-PUBACK p50/p99;
// 2. sustained: 500 commands/s (answered SUCCEEDED) beside the ingest load, against ingest alone,
//    side by side on one server in rotating order; and the floor: ingest alone while the same
//    gateways take 500 commands/s from a bare server (commands-floor-server.js, no scanhub code);
// 3. offline: 10,000 commands queued for 1,000 offline gateways, which then connect at once: until
//    every command is DELIVERED.
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, percentile, report } from './lib.js';
import { openDatabase } from '../dist/store/sqlite/open.js';
import { RUNS, benchGateways, cpuMs, cpuSince, cpuSnapshot, dropDeployment, forkGenerator, ingestSettings, load, login, newDeployment, psql, startPostgres, startServe, summarize } from './stores-lib.js';

const BENCH = 'commands';
const CUSTOMER = 'bench';
const DELIVERY_GATEWAYS = Number(process.env.BENCH_COMMAND_GATEWAYS ?? 2000);
const RATE = Number(process.env.BENCH_COMMAND_RATE ?? 500);
const OFFLINE_GATEWAYS = Number(process.env.BENCH_OFFLINE_GATEWAYS ?? 1000);
const OFFLINE_PER_GATEWAY = 10;
const BULK = 1000;
/** The sustained load's command gateways and its tick: RATE/10 commands every 100 ms. */
const SUSTAINED_GATEWAYS = 500;
/** Which parts run (BENCH_COMMAND_PARTS, default all three). */
const PARTS = new Set((process.env.BENCH_COMMAND_PARTS ?? 'delivery,sustained,offline').split(','));
const TICK_MS = 100;
/** The sustained part's phases (BENCH_COMMAND_PHASES), run in an order rotated by one each run. */
const PHASES = (process.env.BENCH_COMMAND_PHASES ?? 'alone,commands,floor').split(',');
if (!PHASES.includes('alone') || PHASES.some((p) => !['alone', 'commands', 'floor'].includes(p))) throw new Error(`BENCH_COMMAND_PHASES: alone and any of commands, floor (not ${PHASES})`);
/** BENCH_SERVE_BIN: another build's bin/scanhub.js to serve (a base build, run side by side with this one's). */
const SERVE_BIN = process.env.BENCH_SERVE_BIN;

/** Commands of the deployment in a status (read from its database, as a reader would). */
function countStatus(deployment, status) {
  if (deployment.kind === 'postgres') return Number(psql(deployment.url, `SELECT count(*) FROM commands WHERE status = '${status}'`));
  const db = openDatabase(join(deployment.dataDir, 'scanhub.db'), { readonly: true });
  try {
    return db.prepare('SELECT count(*) FROM commands WHERE status = ?').pluck().get(status);
  } finally {
    db.close();
  }
}

/** Resolves with the epoch ms at which `count` commands read DELIVERED (or later), polled every 20 ms. */
async function deliveredBy(deployment, count, statuses = ['DELIVERED']) {
  for (;;) {
    let total = 0;
    for (const status of statuses) total += countStatus(deployment, status);
    if (total >= count) return Date.now();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A commands-client.js process for these gateways; `next()` resolves with its next message. */
async function commandClient(server, gateways, options) {
  const child = fork(new URL('./commands-client.js', import.meta.url), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const messages = [];
  let waiting;
  child.on('message', (m) => (waiting ? (waiting(m), (waiting = undefined)) : messages.push(m)));
  const next = () => (messages.length ? Promise.resolve(messages.shift()) : new Promise((resolve) => (waiting = resolve)));
  child.send({ host: '127.0.0.1', port: server.mqttPort, caPem: gateways.ca.certPem, gateways: gateways.list, ...options });
  if ((await next()).type !== 'ready') throw new Error('commands client not ready');
  return {
    pid: child.pid,
    next,
    async connect() {
      child.send('connect');
      return next();
    },
    async received(count) {
      child.send({ wait: count });
      return next();
    },
    async close() {
      child.send('close');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/** `gateway_ids` in bulk calls of 1,000, all at once; the created commands. */
async function sendBulk(server, token, gatewayIds, body) {
  const calls = [];
  for (let i = 0; i < gatewayIds.length; i += BULK) calls.push(api(server.url, 'POST', `/${CUSTOMER}/commands`, token, { gateway_ids: gatewayIds.slice(i, i + BULK), ...body }));
  return (await Promise.all(calls)).flat();
}

async function withServer(kind, pg, work) {
  const deployment = newDeployment(kind, pg, { prefix: 'commands' });
  const server = await startServe(deployment, { customer: CUSTOMER, logLevel: 'warn', ...(SERVE_BIN ? { bin: SERVE_BIN } : {}) });
  try {
    return await work(deployment, server, await login(server.url));
  } finally {
    await server.stop();
    dropDeployment(deployment);
  }
}

/** 1. One command to each of DELIVERY_GATEWAYS connected gateways. */
function deliveryRun(kind, pg) {
  return withServer(kind, pg, async (deployment, server, token) => {
    const gateways = await benchGateways(deployment, CUSTOMER, DELIVERY_GATEWAYS, 'cmd');
    const client = await commandClient(server, gateways, { subscribe: true, clean: true, respond: false });
    await client.connect();
    const started = Date.now();
    const created = await sendBulk(server, token, gateways.list.map((g) => g.id), { name: 'feedback', parameters: { sequence: 'OK' } });
    const received = await client.received(created.length);
    const allDelivered = await deliveredBy(deployment, created.length);
    const arrivals = new Map(received.arrivals);
    const latencies = created.map((c) => arrivals.get(c.command_id) - c.created);
    await client.close();
    const figures = { seconds: (allDelivered - started) / 1000, p50: percentile(latencies, 50), p99: percentile(latencies, 99), duplicates: received.duplicates };
    console.error(`${BENCH}: ${kind} delivery of ${created.length}: all DELIVERED in ${figures.seconds.toFixed(2)} s, create-to-PUBACK p50 ${figures.p50} ms p99 ${figures.p99} ms; load ${load()}`);
    return figures;
  });
}

/**
 * Ingest for the settings' time on the server, with `beside` running meanwhile; events/s
 * acknowledged, and serve's CPU (all its threads, from /proc) per 1,000 events acknowledged.
 */
async function ingestPhase(server, gateways, settings, beside) {
  const generator = forkGenerator({ host: '127.0.0.1', port: server.mqttPort }, gateways, settings);
  const connected = await generator.next();
  if (connected.type !== 'connected') throw new Error(`load generator: ${JSON.stringify(connected)}`);
  const cpu = cpuSnapshot([server.pid]);
  generator.start();
  const stop = beside?.();
  const result = await generator.next();
  const serveCpuMs = cpuSince(cpu);
  const besideResult = await stop?.();
  generator.kill();
  return { eventsPerSecond: result.ackedInWindow / (result.elapsedMs / 1000), cpuPer1000: (serveCpuMs / result.acked) * 1000, beside: besideResult };
}

/**
 * RATE commands/s through serve's API: RATE/10 every 100 ms, in one bulk call, round the command
 * gateways. A `beside` of ingestPhase: starts them, and returns their stop, which resolves with
 * the commands sent, their rate and the gateways' process's CPU per command (it shares the 2 cores).
 */
function serveCommands(server, token, client, ids, counter) {
  return () => {
    const startedAt = performance.now();
    const sentBefore = counter.sent;
    const clientCpu = cpuSnapshot([client.pid]);
    // This process's HTTP client (the bulk calls) is on the same 2 cores too.
    const benchCpu = process.cpuUsage();
    let stopped = false;
    const loop = (async () => {
      for (let tick = 0; !stopped; tick++) {
        const batch = Array.from({ length: (RATE * TICK_MS) / 1000 }, (_, i) => ids[(counter.sent + i) % ids.length]);
        await api(server.url, 'POST', `/${CUSTOMER}/commands`, token, { gateway_ids: batch, name: 'feedback', parameters: { sequence: 'OK' } });
        counter.sent += batch.length;
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, startedAt + (tick + 1) * TICK_MS - performance.now())));
      }
    })();
    return async () => {
      stopped = true;
      await loop;
      const count = counter.sent - sentBefore;
      const bench = process.cpuUsage(benchCpu);
      return { count, rate: count / ((performance.now() - startedAt) / 1000), clientCpuPerCommand: (cpuSince(clientCpu) / count) * 1000, benchCpuPerCommand: (bench.user + bench.system) / count };
    };
  };
}

/**
 * The floor's bare command server (commands-floor-server.js) with serve's server pair and the
 * deployment's CA, and a commands-client.js process of the same gateways connected and subscribed
 * to it. `beside()` runs RATE commands/s there (as serveCommands); its stop waits until each has
 * its PUBACK and SUCCEEDED response, and resolves with the two processes' CPU per command.
 */
async function floorCommands(deployment, gateways) {
  const child = fork(new URL('./commands-floor-server.js', import.meta.url), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = () => new Promise((resolve) => child.once('message', resolve));
  const pki = join(deployment.dataDir, 'pki');
  const listening = next();
  child.send({ certPem: readFileSync(join(pki, 'server.crt'), 'utf8'), keyPem: readFileSync(join(pki, 'server.key'), 'utf8'), caPem: gateways.ca.certPem, rate: RATE, tickMs: TICK_MS });
  const { port } = await listening;
  const client = await commandClient({ mqttPort: port }, gateways, { subscribe: true, clean: true, respond: true });
  await client.connect();
  return {
    beside: () => {
      const cpu = cpuSnapshot([child.pid, client.pid]);
      child.send('start');
      return async () => {
        const stopped = next();
        child.send('stop');
        const result = await stopped;
        if (result.pubacks !== result.sent || result.succeeded !== result.sent) throw new Error(`floor: ${JSON.stringify(result)}`);
        return { count: result.sent, rate: result.sent / result.seconds, serverCpuPerCommand: ((cpuMs(child.pid) - cpu.get(child.pid)) / result.sent) * 1000, clientCpuPerCommand: ((cpuMs(client.pid) - cpu.get(client.pid)) / result.sent) * 1000 };
      };
    },
    async close() {
      await client.close();
      child.send('close');
    },
  };
}

/**
 * 2. The sustained phases on one server, in an order rotated by `run`: ingest alone, ingest with
 * RATE commands/s, and ingest alone beside the floor's RATE commands/s on the bare server.
 */
function sustainedRun(kind, pg, run) {
  return withServer(kind, pg, async (deployment, server, token) => {
    const settings = ingestSettings(BENCH);
    const loadGateways = await benchGateways(deployment, CUSTOMER, settings.gatewayCount, 'load');
    const commandGateways = await benchGateways(deployment, CUSTOMER, SUSTAINED_GATEWAYS, 'cmd');
    const client = await commandClient(server, commandGateways, { subscribe: true, clean: true, respond: true });
    await client.connect();
    const floor = PHASES.includes('floor') ? await floorCommands(deployment, commandGateways) : undefined;
    const counter = { sent: 0 };
    const commands = serveCommands(server, token, client, commandGateways.list.map((g) => g.id), counter);
    const phases = {};
    for (let i = 0; i < PHASES.length; i++) {
      const side = PHASES[(run + i) % PHASES.length];
      phases[side] = await ingestPhase(server, loadGateways, settings, { alone: undefined, commands, floor: floor?.beside }[side]);
    }
    await floor?.close();
    const figures = { alone: phases.alone.eventsPerSecond, cpuAlone: phases.alone.cpuPer1000, duplicates: 0 };
    if (phases.floor) Object.assign(figures, floorFigures(phases.floor));
    if (phases.commands) Object.assign(figures, await commandFigures(deployment, server, client, commands, counter, phases.commands, phases.alone.cpuPer1000, settings));
    await client.close();
    console.error(
      `${BENCH}: ${kind} sustained: ingest alone ${Math.round(figures.alone)} events/s (serve ${figures.cpuAlone.toFixed(1)} CPU ms/1,000)` +
        (phases.commands
          ? `, with ${Math.round(figures.commandsPerSecond)} commands/s ${Math.round(figures.withCommands)} events/s (${figures.cpuWithCommands.toFixed(1)} CPU ms/1,000) ` +
            `(${(figures.withCommands / figures.alone).toFixed(3)}x); serve ${Math.round(figures.serveCpuUsPerCommand)} µs CPU per command beside ingest, ${Math.round(figures.commandsAloneCpuUs)} µs without; ` +
            `the gateways' process ${Math.round(figures.clientCpuUsPerCommand)} µs, the bench's HTTP client ${Math.round(figures.benchCpuUsPerCommand)} µs; all ${counter.sent} SUCCEEDED`
          : '') +
        (phases.floor
          ? `; floor: ${Math.round(figures.floor)} events/s (${figures.cpuFloor.toFixed(1)} CPU ms/1,000) beside ${Math.round(figures.floorCommandsPerSecond)} commands/s on the bare server ` +
            `(${(figures.floor / figures.alone).toFixed(3)}x), the bare server ${Math.round(figures.floorServerCpuUs)} µs CPU per command, its gateways' process ${Math.round(figures.floorClientCpuUs)} µs`
          : '') +
        `; load ${load()}`,
    );
    return figures;
  });
}

/** The floor phase's figures: ingest beside the bare server, and its two processes' CPU per command. */
function floorFigures(phase) {
  return { floor: phase.eventsPerSecond, cpuFloor: phase.cpuPer1000, floorCommandsPerSecond: phase.beside.rate, floorServerCpuUs: phase.beside.serverCpuPerCommand, floorClientCpuUs: phase.beside.clientCpuPerCommand };
}

/**
 * The commands phase's figures; first the commands alone for the settings' time, serve's CPU per
 * command without ingest beside it (the difference of two ingest phases moves with the machine's
 * load far more), then until every command sent is SUCCEEDED in the store.
 */
async function commandFigures(deployment, server, client, commands, counter, phase, cpuAlone, settings) {
  const serveCpu = cpuSnapshot([server.pid]);
  const stopAlone = commands();
  await new Promise((resolve) => setTimeout(resolve, settings.seconds * 1000));
  const alone = await stopAlone();
  const received = await client.received(counter.sent);
  await deliveredBy(deployment, counter.sent, ['SUCCEEDED']);
  const figures = {
    withCommands: phase.eventsPerSecond,
    cpuWithCommands: phase.cpuPer1000,
    commandsPerSecond: phase.beside.rate,
    clientCpuUsPerCommand: phase.beside.clientCpuPerCommand,
    benchCpuUsPerCommand: phase.beside.benchCpuPerCommand,
    commandsAloneCpuUs: (cpuSince(serveCpu) / alone.count) * 1000,
    duplicates: received.duplicates,
  };
  // Serve's CPU per command beyond ingest's: (CPU per event with - alone) x events / commands.
  figures.serveCpuUsPerCommand = (((figures.cpuWithCommands - cpuAlone) / 1000) * figures.withCommands * 1000) / figures.commandsPerSecond;
  return figures;
}

/** 3. OFFLINE_PER_GATEWAY commands for each of OFFLINE_GATEWAYS offline gateways, then their reconnect storm. */
function offlineRun(kind, pg) {
  return withServer(kind, pg, async (deployment, server, token) => {
    const gateways = await benchGateways(deployment, CUSTOMER, OFFLINE_GATEWAYS, 'offline');
    const ids = gateways.list.map((g) => g.id);
    for (let i = 0; i < OFFLINE_PER_GATEWAY; i++) await sendBulk(server, token, ids, { name: 'display', parameters: { template: `line ${i}` }, ttl_seconds: 600 });
    const total = ids.length * OFFLINE_PER_GATEWAY;
    const client = await commandClient(server, gateways, { subscribe: true, clean: true, respond: false });
    const started = Date.now();
    const connected = await client.connect();
    await client.received(total);
    const allDelivered = await deliveredBy(deployment, total);
    await client.close();
    const figures = { seconds: (allDelivered - started) / 1000, stormSeconds: connected.seconds, afterStorm: (allDelivered - started) / 1000 - connected.seconds };
    console.error(`${BENCH}: ${kind} offline: ${total} commands for ${ids.length} gateways DELIVERED ${figures.seconds.toFixed(2)} s after their storm began (connected in ${figures.stormSeconds.toFixed(2)} s); load ${load()}`);
    return figures;
  });
}

/** The figures of one store's runs, min / median / max each (summarize), with the targets of the issue. */
function reportFigures(kind, delivery, sustained, offline) {
  const median = (values) => percentile(values, 50);
  if (delivery.length) {
    summarize(BENCH, `delivery_${DELIVERY_GATEWAYS}_all_delivered_seconds`, 's', { [kind]: delivery.map((f) => f.seconds) }, { target: 2 });
    summarize(BENCH, 'delivery_create_to_puback_p99_ms', 'ms', { [kind]: delivery.map((f) => f.p99) });
    summarize(BENCH, 'delivery_create_to_puback_p50_ms', 'ms', { [kind]: delivery.map((f) => f.p50) });
  }
  if (sustained.length) {
    summarize(BENCH, 'ingest_alone_events_per_second', 'events/s', { [kind]: sustained.map((f) => f.alone) });
    summarize(BENCH, 'serve_cpu_ms_per_1000_events_alone', 'ms', { [kind]: sustained.map((f) => f.cpuAlone) });
  }
  if (PHASES.includes('commands') && sustained.length) {
    summarize(BENCH, 'ingest_with_commands_events_per_second', 'events/s', { [kind]: sustained.map((f) => f.withCommands) });
    summarize(BENCH, 'serve_cpu_ms_per_1000_events_with_commands', 'ms', { [kind]: sustained.map((f) => f.cpuWithCommands) });
    summarize(BENCH, 'commands_per_second_sent', 'commands/s', { [kind]: sustained.map((f) => f.commandsPerSecond) }, { target: RATE * 0.95, cmp: '>=' });
    summarize(BENCH, 'serve_cpu_us_per_command', 'µs', { [kind]: sustained.map((f) => f.serveCpuUsPerCommand) });
    summarize(BENCH, 'commands_client_cpu_us_per_command', 'µs', { [kind]: sustained.map((f) => f.clientCpuUsPerCommand) });
    summarize(BENCH, 'bench_http_client_cpu_us_per_command', 'µs', { [kind]: sustained.map((f) => f.benchCpuUsPerCommand) });
    summarize(BENCH, 'serve_cpu_us_per_command_without_ingest', 'µs', { [kind]: sustained.map((f) => f.commandsAloneCpuUs) });
    const ratio = median(sustained.map((f) => f.withCommands)) / median(sustained.map((f) => f.alone));
    report(BENCH, `${kind}_ingest_with_commands_ratio_to_alone`, ratio, 'x', 0.95, '>=');
  }
  if (PHASES.includes('floor') && sustained.length) {
    // The floor: the best ratio any serve could reach beside these gateways on this machine.
    summarize(BENCH, 'ingest_floor_events_per_second', 'events/s', { [kind]: sustained.map((f) => f.floor) });
    summarize(BENCH, 'serve_cpu_ms_per_1000_events_floor', 'ms', { [kind]: sustained.map((f) => f.cpuFloor) });
    summarize(BENCH, 'floor_commands_per_second_sent', 'commands/s', { [kind]: sustained.map((f) => f.floorCommandsPerSecond) });
    summarize(BENCH, 'floor_server_cpu_us_per_command', 'µs', { [kind]: sustained.map((f) => f.floorServerCpuUs) });
    summarize(BENCH, 'floor_commands_client_cpu_us_per_command', 'µs', { [kind]: sustained.map((f) => f.floorClientCpuUs) });
    summarize(BENCH, 'ingest_floor_to_alone_per_run', 'x', { [kind]: sustained.map((f) => f.floor / f.alone) });
    report(BENCH, `${kind}_ingest_ratio_floor_to_alone`, median(sustained.map((f) => f.floor)) / median(sustained.map((f) => f.alone)), 'x');
  }
  if (offline.length) {
    summarize(BENCH, `offline_${OFFLINE_GATEWAYS * OFFLINE_PER_GATEWAY}_delivered_seconds`, 's', { [kind]: offline.map((f) => f.seconds) }, { target: 10 });
    summarize(BENCH, 'offline_storm_seconds', 's', { [kind]: offline.map((f) => f.stormSeconds) });
    summarize(BENCH, 'offline_delivered_after_storm_seconds', 's', { [kind]: offline.map((f) => f.afterStorm) });
  }
  report(BENCH, `${kind}_redeliveries`, [...delivery, ...sustained].reduce((total, f) => total + f.duplicates, 0), 'commands');
}

const kinds = (process.env.BENCH_STORES ?? 'sqlite').split(',');
const pg = kinds.includes('postgres') ? startPostgres(BENCH) : undefined;
try {
  for (const kind of kinds.filter((k) => k === 'sqlite' || pg)) {
    const [delivery, sustained, offline] = [[], [], []];
    for (let run = 0; run < RUNS; run++) {
      if (PARTS.has('delivery')) delivery.push(await deliveryRun(kind, pg));
      if (PARTS.has('sustained')) sustained.push(await sustainedRun(kind, pg, run));
      if (PARTS.has('offline')) offline.push(await offlineRun(kind, pg));
    }
    reportFigures(kind, delivery, sustained, offline);
  }
  report(BENCH, 'load_average_1m_at_end', Number(load().split(' ')[0]), 'load');
} finally {
  pg?.stop();
}
