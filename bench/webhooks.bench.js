// Webhook delivery beside MQTT ingest (bench/README.md "webhooks"), `serve` started from the CLI,
// RUNS rounds of three runs side by side in rotating order: ingest alone; ingest with three
// webhooks to a local receiver that answers at once; ingest with one webhook whose receiver answers
// after 9 s. Targets: with three webhooks >= 0.9x the ingest alone, with the slow one >= 0.95x;
// every stored event delivered to each prompt webhook, none behind 5 s after the load stops; the
// delivery lag (receipt at the receiver minus the event's `created`) p99 under 1 s.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { api, percentile, report } from './lib.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, RUNS, dropDeployment, ingestRun, ingestSettings, newDeployment, startServe, summarize } from './stores-lib.js';

const BENCH = 'webhooks';
const SLOW_MS = 9_000;

/** A receiver on loopback: counts events, and the lag of each; answers after `delayMs`. */
async function startReceiver(delayMs = 0) {
  const state = { events: 0, messages: 0, lags: [], ids: new Set(), duplicates: 0 };
  const server = createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const now = Date.now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const answer = () => {
        if (response.destroyed) return;
        response.writeHead(204).end();
        if (!Array.isArray(body.data)) return;
        state.messages++;
        for (const event of body.data) {
          if (state.ids.has(event.id)) state.duplicates++;
          else state.ids.add(event.id), state.events++, state.lags.push(now - event.created);
        }
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/hook`;
  return { url, state, close: () => (server.closeAllConnections(), new Promise((resolve) => server.close(resolve))) };
}

/** Creates a webhook of the customer for scans to each receiver; the admin's token. */
async function subscribe(server, customer, receivers) {
  const { id_token } = await api(server.url, 'POST', '/auth/login', undefined, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
  for (const receiver of receivers) await api(server.url, 'POST', `/${customer}/webhooks`, id_token, { url: receiver.url, event_types: ['event.scan', 'event.telemetry'] });
  return id_token;
}

const BIN = new URL('../bin/scanhub.js', import.meta.url).pathname;

/**
 * `scanhub simulate` at 1,000 events/s (20 gateways x 50/s) for `seconds` beside three prompt
 * webhooks: the delivery lag p99 and whether every event arrived; `serve` started from the CLI.
 */
async function lagAtThousand(seconds) {
  const customer = 'bench';
  const deployment = newDeployment('sqlite', undefined, { prefix: 'webhooks' });
  const server = await startServe(deployment, { customer, logLevel: 'warn', args: ['--webhook-allow-loopback'] });
  const receivers = await Promise.all([startReceiver(), startReceiver(), startReceiver()]);
  try {
    const token = await subscribe(server, customer, receivers);
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
    const lags = receivers.flatMap((r) => r.state.lags);
    report(BENCH, 'simulate_1000_per_second_events_sent', sent, 'events');
    report(BENCH, 'simulate_1000_per_second_events_delivered_min', Math.min(...receivers.map((r) => r.state.events)), 'events', sent, '>=');
    report(BENCH, 'simulate_1000_per_second_lag_p50', percentile(lags, 50), 'ms');
    report(BENCH, 'simulate_1000_per_second_lag_p99', percentile(lags, 99), 'ms', 1000);
    report(BENCH, 'simulate_1000_per_second_all_delivered_after_ms', performance.now() - loadEnded, 'ms');
  } finally {
    await server.stop();
    await Promise.all(receivers.map((r) => r.close()));
    dropDeployment(deployment);
  }
}

/** Waits until no receiver got an event for `quietMs`, or `ms` passed: the deliveries after the load count in serve's CPU. */
async function quiet(receivers, quietMs, ms) {
  const started = performance.now();
  let last = -1;
  let since = performance.now();
  while (performance.now() - started < ms) {
    const total = receivers.reduce((sum, r) => sum + r.state.events, 0);
    if (total !== last) (last = total), (since = performance.now());
    else if (performance.now() - since >= quietMs) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits until each prompt receiver has `count` events, or `ms` passed; how long it took. */
async function drained(receivers, count, ms) {
  const started = performance.now();
  while (receivers.some((r) => r.state.events < count) && performance.now() - started < ms) await new Promise((resolve) => setTimeout(resolve, 20));
  return performance.now() - started;
}

await lagAtThousand(Number(process.env.BENCH_SIMULATE_SECONDS ?? 20));

const settings = ingestSettings(BENCH);
const runs = { alone: [], three_webhooks: [], slow_webhook: [] };
const cpu = { alone: [], three_webhooks: [], slow_webhook: [] };
const delivery = { rate: [], lagP99: [], drainMs: [] };

/** One run of a configuration; its ingest events/s. */
async function measure(config) {
  const receivers = config === 'alone' ? [] : await Promise.all(config === 'slow_webhook' ? [startReceiver(SLOW_MS)] : [startReceiver(), startReceiver(), startReceiver()]);
  let loadEnded = 0;
  try {
    const figures = await ingestRun('sqlite', undefined, {
      ...settings,
      label: `sqlite ${config}`,
      serveArgs: ['--webhook-allow-loopback'],
      before: receivers.length ? (server) => subscribe(server, settings.customer, receivers) : undefined,
      during: () => async () => {
        loadEnded = performance.now();
        if (config === 'three_webhooks') await quiet(receivers, 300, 5_000);
        return undefined;
      },
    });
    cpu[config].push(figures.serveCpuPer1000);
    if (config === 'three_webhooks') {
      // Nothing behind: every acknowledged event at each receiver within 5 s of the load's end.
      const waited = await drained(receivers, figures.acked, 5_000);
      const behind = receivers.map((r) => figures.acked - r.state.events);
      if (behind.some((n) => n !== 0)) console.error(`${BENCH}: receivers behind by ${behind.join(', ')} events 5 s after the load`);
      delivery.drainMs.push(waited + (performance.now() - loadEnded - waited));
      const seconds = settings.seconds + settings.warmupSeconds;
      delivery.rate.push(Math.min(...receivers.map((r) => r.state.events)) / seconds);
      delivery.lagP99.push(Math.max(...receivers.map((r) => percentile(r.state.lags, 99))));
      console.error(`${BENCH}: delivered ${receivers.map((r) => `${r.state.events} in ${r.state.messages} messages (${r.state.duplicates} again)`).join('; ')}`);
    }
    return figures.eventsPerSecond;
  } finally {
    await Promise.all(receivers.map((r) => r.close()));
  }
}

const order = Object.keys(runs);
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
report(BENCH, 'ingest_ratio_three_webhooks_to_alone', median(runs.three_webhooks) / median(runs.alone), 'x', 0.9, '>=');
report(BENCH, 'ingest_ratio_slow_webhook_to_alone', median(runs.slow_webhook) / median(runs.alone), 'x', 0.95, '>=');
summarize(BENCH, 'delivered_events_per_second_per_webhook', 'events/s', { three_webhooks: delivery.rate });
summarize(BENCH, 'delivery_lag_p99', 'ms', { three_webhooks: delivery.lagP99 }, { target: 1000 });
summarize(BENCH, 'all_delivered_after_load_ms', 'ms', { three_webhooks: delivery.drainMs }, { target: 5000 });
