// The webhooks' hand-off alone, in one process and off the network (bench/README.md "webhooks",
// session 38): a worker thread packs commits of 500 stored rows as SQLite's ingest writer does
// (store/shared/committed-events.ts) and posts them, the main thread takes them into RecentEvents
// and builds three webhooks' batches and bodies from them (webhooks/messages.ts). CPU of the
// whole process (both threads and V8's helpers) per 1,000 events: the part of serve's cost that
// the full-load bench cannot tell apart from the machine's noise, compared between builds.
// `node bench/webhook-handoff.js [dist directory ...]` (default: this build's dist/), BENCH_RUNS
// rounds (5) alternating the builds, BENCH_COMMITS (2,000) commits per run; JSON lines out.
import { fork } from 'node:child_process';
import { resolve } from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const PER_COMMIT = 500;

/** A stored row (STORED_EVENT_COLUMNS order) like the ingest bench's events: every seventh telemetry, 20 gateways. */
const row = (i) => ['c', `0190a1b2-c3d4-7e5f-8a9b-${String(i).padStart(12, '0')}`, 'event', i % 7 ? 'scan' : 'telemetry', 1_732_700_000_000 + i, `4006381333931-${i % 4096}`, 142, 'EAN-13', `scanner-${i % 50}-a`, 87, '2.4.1', 31.5, `gw-${i % 20}`, null, null, null, null, 1];

async function writer(dist) {
  const packing = await import(`${dist}/store/shared/committed-events.js`);
  const { eventJson } = await import(`${dist}/store/shared/event-json.js`);
  // Builds before session 38 packed the JSON text: add(customer, seq, json, gateway).
  const rows = packing.CommittedPacker.prototype.add.length === 2;
  let seq = 0;
  parentPort.on('message', () => {
    const packer = new packing.CommittedPacker();
    for (let k = 0; k < PER_COMMIT; k++) {
      const values = row(seq++);
      if (rows) packer.add(values, seq);
      else packer.add(values[0], seq, eventJson(values, 1, true), values[12]);
    }
    const packed = packer.packed();
    parentPort.postMessage(packed, packing.transferred?.(packed) ?? []);
  });
}

async function run(dist, commits) {
  const { RecentEvents } = await import(`${dist}/webhooks/recent-events.js`);
  const { SharedBatches, messageBody, nextBatch } = await import(`${dist}/webhooks/messages.js`);
  const recent = new RecentEvents({ after: async (_customer, after) => ({ events: [], reached: after, more: false }) });
  const shared = new SharedBatches();
  const webhooks = [1, 2, 3].map((n) => ({ id: `w${n}`, customer_id: 'c', event_types: ['event.scan', 'event.telemetry'], cursor: [0] }));
  const thread = new Worker(new URL(import.meta.url), { workerData: { dist } });
  // The window opens at the first read; the commits then extend it.
  for (const webhook of webhooks) await nextBatch(recent, webhook, webhook.cursor, 0, shared);
  const cpu = process.cpuUsage();
  for (let c = 0; c < commits; c++) {
    thread.postMessage('next');
    recent.committed(await new Promise((done) => thread.once('message', done)));
    for (const webhook of webhooks) {
      const batch = await nextBatch(recent, webhook, webhook.cursor, 0, shared);
      if (!batch.delivery) throw new Error('a commit gave no batch');
      await messageBody(recent, webhook, { ...batch.delivery, attempts: 0, status: 'PENDING', response_status: null, latency_ms: null, next_attempt: null }, batch.data);
      webhook.cursor = batch.delivery.upto;
    }
  }
  const used = process.cpuUsage(cpu);
  await thread.terminate();
  return ((used.user + used.system) / 1000 / (commits * PER_COMMIT)) * 1000;
}

if (!isMainThread) await writer(workerData.dist);
else if (process.argv[2] === '--run') process.send(await run(process.argv[3], Number(process.argv[4])));
else {
  const dists = (process.argv.length > 2 ? process.argv.slice(2) : [new URL('../dist', import.meta.url).pathname]).map((dist) => resolve(dist));
  const rounds = Number(process.env.BENCH_RUNS ?? 5);
  const commits = Number(process.env.BENCH_COMMITS ?? 2_000);
  const figures = new Map(dists.map((dist) => [dist, []]));
  for (let round = 0; round < rounds; round++) {
    for (const dist of dists) {
      const child = fork(new URL(import.meta.url).pathname, ['--run', dist, String(commits)]);
      figures.get(dist).push(await new Promise((done, fail) => (child.once('message', done), child.once('error', fail))));
    }
  }
  for (const [dist, values] of figures) {
    const sorted = [...values].sort((a, b) => a - b);
    const value = (x) => Math.round(x * 1000) / 1000;
    console.log(JSON.stringify({ bench: 'webhook-handoff', dist, metric: 'cpu_ms_per_1000_events', min: value(sorted[0]), median: value(sorted[Math.floor(sorted.length / 2)]), max: value(sorted.at(-1)), runs: values.map(value) }));
  }
}
