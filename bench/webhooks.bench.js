// Webhook delivery beside MQTT ingest (bench/README.md "webhooks"), `serve` started from the CLI,
// RUNS rounds of four runs side by side in rotating order: ingest alone; ingest with three
// webhooks to a local receiver that answers at once; ingest with one webhook whose receiver answers
// after 9 s; the floor: ingest alone while a bare sender (bench/webhook-floor-sender.js) sends the
// three receivers what serve would, the best ratio any serve could reach beside them. Targets: with three webhooks >= 0.9x the ingest alone, with the slow one >= 0.95x;
// every stored event delivered to each prompt webhook, none behind 5 s after the load stops; the
// delivery lag (receipt at the receiver minus the event's `created`) p99 under 1 s. The receivers
// run in a child process of their own (bench/webhook-receiver.js), their CPU reported apart.
import { fork, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { api, percentile, report } from './lib.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, RUNS, cpuMs, dropDeployment, ingestRun, ingestSettings, newDeployment, startServe, summarize } from './stores-lib.js';

const BENCH = 'webhooks';
const SLOW_MS = 9_000;
const RECEIVER = new URL('./webhook-receiver.js', import.meta.url).pathname;
// How long after the load serve's CPU is still counted while the receivers get events (and the
// last of them awaited): a build that delivers after the load pays for it in its figure too.
const DRAIN_MS = 15_000;

/**
 * `count` receivers on loopback in a child process of their own (bench/webhook-receiver.js), that
 * answer after `delayMs`; `mode` `count` (no parse) or `full` (every id, order per gateway).
 * `events()` the events each one got so far, `state()` everything (with the lags), `cpuMs()` the
 * child's CPU so far.
 */
async function startReceivers(count, { delayMs = 0, mode = 'count' } = {}) {
  const child = fork(RECEIVER, [String(count), String(delayMs), mode], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const replies = [];
  child.on('message', (message) => replies.shift()?.(message));
  const ask = (question) => new Promise((resolve) => (replies.push(resolve), question && child.send(question)));
  const { urls } = await ask();
  return {
    urls,
    pid: child.pid,
    events: async () => (await ask('events')).events,
    state: async () => (await ask('state')).state,
    cpuMs: () => cpuMs(child.pid),
    close: () => new Promise((resolve) => (child.once('exit', resolve), child.send('close'))),
  };
}

/** Creates a webhook of the customer for scans to each receiver; the admin's token. */
async function subscribe(server, customer, urls) {
  const { id_token } = await api(server.url, 'POST', '/auth/login', undefined, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
  for (const url of urls) await api(server.url, 'POST', `/${customer}/webhooks`, id_token, { url, event_types: ['event.scan', 'event.telemetry'] });
  return id_token;
}

const BIN = new URL('../bin/scanhub.js', import.meta.url).pathname;
const FLOOR_SENDER = new URL('./webhook-floor-sender.js', import.meta.url).pathname;
// How often the floor's sender is told the events acknowledged so far.
const FLOOR_TICK_MS = 50;
/** The JSON texts of up to 500 real events, read once from serve's events API (the floor's batches repeat them). */
let floorEvents;

/**
 * The `floor` configuration's bare sender (bench/webhook-floor-sender.js) to the receivers:
 * `during(server, generator)` of an ingest run alone, telling it every FLOOR_TICK_MS the events
 * acknowledged so far; what it returns tells it the last count and waits until every receiver has
 * them (DRAIN_MS at most). `cpuMs()` the sender's CPU so far.
 */
function startFloorSender(urls, token, customer) {
  const child = fork(FLOOR_SENDER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const idle = new Promise((resolve) => child.on('message', (m) => m.idle && resolve()));
  const during = (server, generator) => {
    let stopped = false;
    let ticking = (async () => {
      while (!stopped) {
        const acked = await generator.acked();
        if (!floorEvents && acked >= 500) {
          const page = await api(server.url, 'GET', `/${customer}/events?limit=500`, token);
          floorEvents = page.items.map((event) => JSON.stringify(event));
        }
        if (floorEvents && !child.sentUrls) child.send({ urls, events: floorEvents }), (child.sentUrls = true);
        if (child.sentUrls) child.send({ acked });
        await new Promise((resolve) => setTimeout(resolve, FLOOR_TICK_MS));
      }
    })();
    return async () => {
      stopped = true;
      await ticking;
      if (!child.sentUrls) child.send({ urls, events: floorEvents }), (child.sentUrls = true);
      child.send({ acked: await generator.acked(), last: true });
      await Promise.race([idle, new Promise((resolve) => setTimeout(resolve, DRAIN_MS))]);
    };
  };
  return { during, cpuMs: () => cpuMs(child.pid), close: () => new Promise((resolve) => (child.once('exit', resolve), child.send('close'))) };
}

/**
 * `scanhub simulate` at 1,000 events/s (20 gateways x 50/s) for `seconds` beside three prompt
 * webhooks: the delivery lag p99 and whether every event arrived; `serve` started from the CLI.
 */
async function lagAtThousand(seconds) {
  const customer = 'bench';
  const deployment = newDeployment('sqlite', undefined, { prefix: 'webhooks' });
  const server = await startServe(deployment, { customer, logLevel: 'warn', args: ['--webhook-allow-loopback'] });
  // The full check here: every body parsed, every event id, each gateway's order.
  const receivers = await startReceivers(3, { mode: 'full' });
  try {
    const token = await subscribe(server, customer, receivers.urls);
    const simulate = spawn(process.execPath, [BIN, 'simulate', '--gateways', '20', '--rate', '50', '--duration', `${seconds}s`, '--json'], {
      env: { ...process.env, SCANHUB_URL: server.url, SCANHUB_TOKEN: token },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    simulate.stdout.on('data', (chunk) => (out += chunk));
    await new Promise((resolve) => simulate.on('exit', resolve));
    const loadEnded = performance.now();
    const sent = Number(/"events_sent":\s*(\d+)/.exec(out)?.[1]);
    await drained(receivers, sent, 10_000);
    const allAfter = performance.now() - loadEnded;
    const state = await receivers.state();
    const lags = state.flatMap((r) => r.lags);
    report(BENCH, 'simulate_1000_per_second_events_sent', sent, 'events');
    report(BENCH, 'simulate_1000_per_second_events_delivered_min', Math.min(...state.map((r) => r.events)), 'events', sent, '>=');
    report(BENCH, 'simulate_1000_per_second_out_of_order', state.reduce((sum, r) => sum + r.outOfOrder, 0), 'events', 0);
    report(BENCH, 'simulate_1000_per_second_lag_p50', percentile(lags, 50), 'ms');
    report(BENCH, 'simulate_1000_per_second_lag_p99', percentile(lags, 99), 'ms', 1000);
    report(BENCH, 'simulate_1000_per_second_all_delivered_after_ms', allAfter, 'ms');
  } finally {
    await server.stop();
    await receivers.close();
    dropDeployment(deployment);
  }
}

const pause = () => new Promise((resolve) => setTimeout(resolve, 20));

/** Waits until no receiver got an event for `quietMs`, or `ms` passed: the deliveries after the load count in serve's CPU. */
async function quiet(receivers, quietMs, ms) {
  const started = performance.now();
  let last = -1;
  let since = performance.now();
  while (performance.now() - started < ms) {
    const total = (await receivers.events()).reduce((sum, n) => sum + n, 0);
    if (total !== last) (last = total), (since = performance.now());
    else if (performance.now() - since >= quietMs) return;
    await pause();
  }
}

/** Waits until each receiver has `count` events, or `ms` passed; how long it took. */
async function drained(receivers, count, ms) {
  const started = performance.now();
  while ((await receivers.events()).some((n) => n < count) && performance.now() - started < ms) await pause();
  return performance.now() - started;
}

// BENCH_SIMULATE_SECONDS=0 skips the 1,000 events/s run; BENCH_WEBHOOK_CONFIGS (alone,three_webhooks,slow_webhook,floor) picks the full-load runs.
const simulateSeconds = Number(process.env.BENCH_SIMULATE_SECONDS ?? 20);
if (simulateSeconds > 0) await lagAtThousand(simulateSeconds);

const settings = ingestSettings(BENCH);
const runs = { alone: [], three_webhooks: [], slow_webhook: [], floor: [] };
const cpu = { alone: [], three_webhooks: [], slow_webhook: [], floor: [] };
const delivery = { rate: [], behindAtEnd: [], lagP99: [], drainMs: [], receiverCpu: [] };
const floor = { receiverCpu: [], senderCpu: [] };

/** CPU ms of each thread of a process so far, by thread id (the main thread's is the pid). */
function threadsCpu(pid) {
  const threads = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) threads.set(tid, cpuMs(`${pid}/task/${tid}`));
  return threads;
}

/**
 * Serve's CPU per thread over a run, per 1,000 events (stderr): the server's thread, then the
 * others, busiest first (the ingest writer, the checkpointer, V8's and libuv's helpers).
 */
function threadsLine(config, pid, before, after, acked) {
  const per1000 = (tid) => (((after.get(tid) ?? 0) - (before.get(tid) ?? 0)) / acked) * 1000;
  const others = [...after.keys()].filter((tid) => tid !== String(pid)).map(per1000).filter((ms) => ms >= 0.05).sort((a, b) => b - a);
  console.error(`${BENCH}: ${config}: serve's threads ms/1000 events: server ${per1000(String(pid)).toFixed(1)}, others ${others.map((ms) => ms.toFixed(1)).join(', ')}`);
}

/** One run of a configuration; its ingest events/s. */
async function measure(config) {
  if (config === 'floor') return measureFloor();
  const receivers = config === 'alone' ? undefined : await startReceivers(config === 'slow_webhook' ? 1 : 3, { delayMs: config === 'slow_webhook' ? SLOW_MS : 0 });
  let loadEnded = 0;
  let atLoadEnd = [];
  let receiverCpu = 0;
  let threads;
  try {
    const figures = await ingestRun('sqlite', undefined, {
      ...settings,
      label: `sqlite ${config}`,
      serveArgs: ['--webhook-allow-loopback'],
      before: async (server) => {
        if (receivers) await subscribe(server, settings.customer, receivers.urls), (receiverCpu = receivers.cpuMs());
        threads = { pid: server.pid, before: threadsCpu(server.pid) };
      },
      during: () => async () => {
        loadEnded = performance.now();
        if (config !== 'three_webhooks') return void (threads.after = threadsCpu(threads.pid));
        atLoadEnd = await receivers.events();
        await quiet(receivers, 300, DRAIN_MS);
        receiverCpu = receivers.cpuMs() - receiverCpu;
        threads.after = threadsCpu(threads.pid);
        return undefined;
      },
    });
    cpu[config].push(figures.serveCpuPer1000);
    threadsLine(config, threads.pid, threads.before, threads.after, figures.acked);
    if (config === 'three_webhooks') {
      // Nothing behind: every acknowledged event at each receiver (DRAIN_MS at most after the load).
      await drained(receivers, figures.acked, DRAIN_MS);
      const state = await receivers.state();
      const behind = state.map((r) => figures.acked - r.events);
      if (behind.some((n) => n !== 0)) console.error(`${BENCH}: receivers differ from the ${figures.acked} events acknowledged by ${behind.join(', ')} events ${DRAIN_MS / 1000} s after the load`);
      delivery.drainMs.push(performance.now() - loadEnded);
      const seconds = settings.seconds + settings.warmupSeconds;
      delivery.rate.push(Math.min(...atLoadEnd) / seconds);
      delivery.behindAtEnd.push(figures.acked - Math.min(...atLoadEnd));
      delivery.lagP99.push(Math.max(...state.map((r) => percentile(r.lags, 99))));
      delivery.receiverCpu.push((receiverCpu / figures.acked) * 1000);
      console.error(
        `${BENCH}: delivered ${state.map((r) => `${r.events} in ${r.messages} messages (${r.again} sent again)`).join('; ')}; ` +
          `at the load's end ${atLoadEnd.join(', ')} of ${figures.acked}; receivers' CPU ${delivery.receiverCpu.at(-1).toFixed(1)} ms/1000 events`,
      );
    }
    return figures.eventsPerSecond;
  } finally {
    await receivers?.close();
  }
}

/**
 * One run of the floor: ingest alone while the bare sender sends the three receivers what serve
 * would for three webhooks (every acknowledged event); its ingest events/s.
 */
async function measureFloor() {
  const receivers = await startReceivers(3);
  let sender;
  let started;
  try {
    const figures = await ingestRun('sqlite', undefined, {
      ...settings,
      label: 'sqlite floor',
      before: async (server) => {
        const { id_token } = await api(server.url, 'POST', '/auth/login', undefined, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
        sender = startFloorSender(receivers.urls, id_token, settings.customer);
        started = { receivers: receivers.cpuMs(), sender: sender.cpuMs() };
      },
      during: (server, generator) => sender.during(server, generator),
    });
    cpu.floor.push(figures.serveCpuPer1000);
    const state = await receivers.state();
    const behind = state.map((r) => figures.acked - r.events);
    if (behind.some((n) => n !== 0)) console.error(`${BENCH}: floor: receivers differ from the ${figures.acked} events acknowledged by ${behind.join(', ')} events`);
    floor.receiverCpu.push(((receivers.cpuMs() - started.receivers) / figures.acked) * 1000);
    floor.senderCpu.push(((sender.cpuMs() - started.sender) / figures.acked) * 1000);
    console.error(`${BENCH}: floor: receivers' CPU ${floor.receiverCpu.at(-1).toFixed(1)}, sender's ${floor.senderCpu.at(-1).toFixed(1)} ms/1000 events`);
    return figures.eventsPerSecond;
  } finally {
    await sender?.close();
    await receivers.close();
  }
}

const order = process.env.BENCH_WEBHOOK_CONFIGS?.split(',') ?? Object.keys(runs);
for (const config of Object.keys(runs)) if (!order.includes(config)) (delete runs[config], delete cpu[config]);
for (let run = 0; run < RUNS; run++) {
  for (let i = 0; i < order.length; i++) {
    const config = order[(i + run) % order.length];
    runs[config].push(await measure(config));
  }
}
summarize(BENCH, 'ingest_events_per_second', 'events/s', runs);
// With three webhooks, serve's CPU until the deliveries went quiet after the load (the drain included).
summarize(BENCH, 'serve_cpu_ms_per_1000_events', 'ms', cpu);
const median = (values) => percentile(values, 50);
if (runs.three_webhooks) report(BENCH, 'ingest_ratio_three_webhooks_to_alone', median(runs.three_webhooks) / median(runs.alone), 'x', 0.9, '>=');
if (runs.slow_webhook) report(BENCH, 'ingest_ratio_slow_webhook_to_alone', median(runs.slow_webhook) / median(runs.alone), 'x', 0.95, '>=');
if (runs.floor) {
  // The best ratio any serve could reach with these receivers on this machine: their work and a bare sender's beside ingest alone.
  report(BENCH, 'ingest_ratio_floor_to_alone', median(runs.floor) / median(runs.alone), 'x');
  summarize(BENCH, 'sender_cpu_ms_per_1000_events', 'ms', { floor: floor.senderCpu });
  summarize(BENCH, 'receivers_cpu_ms_per_1000_events', 'ms', { floor: floor.receiverCpu });
}
// Events at the slowest receiver when the load ended, over the load's duration (warm-up included).
summarize(BENCH, 'delivered_events_per_second_per_webhook', 'events/s', { three_webhooks: delivery.rate });
summarize(BENCH, 'events_behind_at_load_end', 'events', { three_webhooks: delivery.behindAtEnd });
summarize(BENCH, 'delivery_lag_p99', 'ms', { three_webhooks: delivery.lagP99 }, { target: 1000 });
summarize(BENCH, 'all_delivered_after_load_ms', 'ms', { three_webhooks: delivery.drainMs }, { target: 5000 });
// The receivers' process (another machine's CPU for a real receiver), per 1,000 events stored.
summarize(BENCH, 'receivers_cpu_ms_per_1000_events', 'ms', { three_webhooks: delivery.receiverCpu });
