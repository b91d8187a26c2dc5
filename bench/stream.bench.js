// Publish-to-stream latency of GET /{customer}/events/stream with many streams while gateways
// publish at a steady rate, on SQLite and on PostgreSQL (bench/README.md "stream"); the publisher
// and the readers are processes of their own, and the PUBACK latency of the same run is the reference.
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { percentile, report } from './lib.js';
import { benchGateways, cpuSince, cpuSnapshot, dropDeployment, load, login, newDeployment, postgresPids, startPostgres, startServe, summarize } from './stores-lib.js';

const BENCH = 'stream';
const runs = Number(process.env.BENCH_RUNS ?? 1);
const streamCount = Number(process.env.BENCH_STREAMS ?? 100);
const rate = Number(process.env.BENCH_RATE ?? 5000);
const gatewayCount = Number(process.env.BENCH_GATEWAYS ?? 50);
const eventsPerMessage = Number(process.env.BENCH_EVENTS_PER_MESSAGE ?? 1);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const customer = 'bench';
const kinds = (process.env.BENCH_STORES ?? 'sqlite,postgres').split(',');

/** A forked helper and its IPC messages, one at a time. */
function child(script) {
  const process_ = fork(new URL(script, import.meta.url), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const messages = [];
  let waiting;
  process_.on('message', (m) => (waiting ? (waiting(m), (waiting = undefined)) : messages.push(m)));
  return {
    send: (m) => process_.send(m),
    next: () => (messages.length ? Promise.resolve(messages.shift()) : new Promise((resolve) => (waiting = resolve))),
    kill: () => process_.kill(),
  };
}

function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
}

async function oneRun(kind, pg) {
  const deployment = newDeployment(kind, pg, { prefix: 'stream' });
  const server = await startServe(deployment, { customer, logLevel: 'warn' });
  const publisher = child('./stream-publisher.js');
  const readers = child('./stream-readers.js');
  try {
    const gateways = await benchGateways(deployment, customer, gatewayCount);
    const token = await login(server.url);
    const rssBefore = rssMb(server.pid);
    readers.send({ url: server.url, customer, token, streams: streamCount });
    const opened = await readers.next();
    if (opened.type !== 'open') throw new Error(`readers: ${JSON.stringify(opened)}`);
    publisher.send({ host: '127.0.0.1', port: server.mqttPort, caPem: gateways.ca.certPem, gateways: gateways.list, rate, eventsPerMessage, window: 256, warmupMs: warmupSeconds * 1000, durationMs: seconds * 1000 });
    const connected = await publisher.next();
    if (connected.type !== 'connected') throw new Error(`publisher: ${JSON.stringify(connected)}`);
    const serveCpu = cpuSnapshot([server.pid]);
    const pgCpu = cpuSnapshot(postgresPids(kind === 'postgres' ? pg : undefined));
    publisher.send('start');
    setTimeout(() => readers.send('measure'), warmupSeconds * 1000).unref();
    const published = await publisher.next();
    // Everything published is acknowledged: give the streams a moment to pass the last events on.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    readers.send('report');
    const read = await readers.next();
    const serveMs = cpuSince(serveCpu);
    const pgMs = kind === 'postgres' ? cpuSince(pgCpu, postgresPids(pg)) : 0;
    const rssAfter = rssMb(server.pid);
    const figures = {
      p50: read.p50,
      p99: read.p99,
      pubackP50: published.pubackP50,
      pubackP99: published.pubackP99,
      achievedRate: published.publishedInWindow / (published.elapsedMs / 1000),
      complete: read.minEvents === published.published && read.maxEvents === published.published ? 1 : 0,
      serveCpuPer1000: (serveMs / published.published) * 1000,
      postgresCpuPer1000: (pgMs / published.published) * 1000,
      rssBefore,
      rssAfter,
    };
    console.error(
      `${BENCH}: ${kind}: ${streamCount} streams, ${Math.round(figures.achievedRate)} events/s published (${published.skipped} skipped: window full), ` +
        `stream latency p50 ${figures.p50.toFixed(1)} ms p99 ${figures.p99.toFixed(1)} ms (max ${read.max.toFixed(1)}; ${read.samples} samples); ` +
        `PUBACK p50 ${figures.pubackP50.toFixed(1)} ms p99 ${figures.pubackP99.toFixed(1)} ms; events per stream ${read.minEvents}..${read.maxEvents} of ${published.published}; ` +
        `${read.ended} streams ended by the server (cut off as too slow); ${(read.bytes / 1e6).toFixed(0)} MB read; serve ${figures.serveCpuPer1000.toFixed(1)} CPU ms/1000 events` +
        (kind === 'postgres' ? `, postgres ${figures.postgresCpuPer1000.toFixed(1)}` : '') +
        `; serve RSS ${rssBefore.toFixed(0)} -> ${rssAfter.toFixed(0)} MB; load ${load()}`,
    );
    return figures;
  } finally {
    publisher.kill();
    readers.kill();
    await server.stop();
    dropDeployment(deployment);
  }
}

const pg = kinds.includes('postgres') ? startPostgres(BENCH) : undefined;
try {
  const active = kinds.filter((kind) => kind === 'sqlite' || pg);
  const results = Object.fromEntries(active.map((kind) => [kind, []]));
  for (let run = 0; run < runs; run++) for (const kind of active) results[kind].push(await oneRun(kind, pg));
  const pick = (field) => Object.fromEntries(active.map((kind) => [kind, results[kind].map((r) => r[field])]));
  summarize(BENCH, 'stream_latency_p50', 'ms', pick('p50'));
  summarize(BENCH, 'stream_latency_p99', 'ms', pick('p99'));
  summarize(BENCH, 'puback_latency_p50', 'ms', pick('pubackP50'));
  summarize(BENCH, 'puback_latency_p99', 'ms', pick('pubackP99'));
  summarize(BENCH, 'events_per_second_published', 'events/s', pick('achievedRate'), { target: rate * 0.98, cmp: '>=' });
  summarize(BENCH, 'serve_cpu_ms_per_1000_events', 'ms', pick('serveCpuPer1000'));
  summarize(BENCH, 'serve_rss_after', 'MB', pick('rssAfter'));
  for (const kind of active) {
    const median = (field) => percentile(results[kind].map((r) => r[field]), 50);
    report(BENCH, `${kind}_stream_p99_over_puback_p99`, median('p99') / median('pubackP99'), 'x');
    report(BENCH, `${kind}_every_stream_got_every_event`, Math.min(...results[kind].map((r) => r.complete)), 'bool', 1, '>=');
  }
  report(BENCH, 'load_average_1m_at_end', Number(load().split(' ')[0]), 'load');
} finally {
  pg?.stop();
}
