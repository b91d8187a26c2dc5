// MQTT ingest of `scanhub serve` (this process) over mutual TLS, PUBACK after commit
// (bench/README.md "ingest"); the load generator (bench/mqtt-load.js) is a process of its own.
// Every acknowledged message is checked to be one stored event.
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../dist/serve/start.js';
import { issueClientCertificateAsync, randomSerialHex } from '../dist/pki/ca.js';
import { report } from './lib.js';

const BENCH = 'ingest';
const gatewayCount = Number(process.env.BENCH_GATEWAYS ?? 200);
const window = Number(process.env.BENCH_WINDOW ?? 16);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const eventsPerMessage = Number(process.env.BENCH_EVENTS_PER_MESSAGE ?? 1);
const customer = 'bench';

const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-bench-ingest-'));
const server = await startServer({
  dataDir,
  host: '127.0.0.1',
  port: 0,
  mqttPort: 0,
  mqttPublicHost: 'localhost',
  customerId: customer,
  adminEmail: 'admin@bench.local',
  adminPassword: 'bench-password-123',
  logger: false,
});
try {
  const ca = server.ctx.ca;
  const now = Date.now();
  const insert = server.ctx.store.db.prepare(
    'INSERT INTO gateways (id, customer_id, name, usecase, station, created, last_updated) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const gateways = await Promise.all(
    Array.from({ length: gatewayCount }, async (_, i) => {
      const id = randomUUID();
      insert.run(id, customer, `bench-${i}`, 'picking', `station-${i % 10}`, now, now);
      const issued = await issueClientCertificateAsync(ca, id, randomSerialHex());
      return { id, topic: `scanhub/${customer}/gateway/${id}`, keyPem: issued.keyPem, certPem: issued.certPem };
    }),
  );

  const load = fork(new URL('./mqtt-load.js', import.meta.url), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const messages = [];
  let waiting;
  load.on('message', (message) => (waiting ? (waiting(message), (waiting = undefined)) : messages.push(message)));
  const next = () => (messages.length ? Promise.resolve(messages.shift()) : new Promise((resolve) => (waiting = resolve)));
  load.send({
    host: '127.0.0.1',
    port: server.mqttPort,
    caPem: ca.certPem,
    gateways,
    window,
    eventsPerMessage,
    warmupMs: warmupSeconds * 1000,
    durationMs: seconds * 1000,
  });
  const connected = await next();
  if (connected.type !== 'connected') throw new Error(`load generator: ${JSON.stringify(connected)}`);

  const cpuStart = process.cpuUsage();
  const wallStart = performance.now();
  const statsStart = { ...server.broker.ingest };
  load.send('start');
  const result = await next();
  const cpu = process.cpuUsage(cpuStart);
  const wallMs = performance.now() - wallStart;

  const stored = server.ctx.store.db.prepare('SELECT count(*) AS n FROM events').get().n;
  const ingest = server.broker.ingest;
  const expected = result.acked * eventsPerMessage;
  if (process.env.BENCH_SKIP_VERIFY) console.error('verification skipped');
  else if (stored !== expected || ingest.events !== expected || ingest.invalid !== 0 || ingest.failed !== 0) {
    throw new Error(`stored ${stored} events, ingest counted ${JSON.stringify(ingest)}, but ${result.acked} messages were acknowledged`);
  }
  const batches = ingest.batches - statsStart.batches;
  const conditions = `${gatewayCount} gateways, window ${window}, ${eventsPerMessage} event(s)/message, ${seconds}s after ${warmupSeconds}s warm-up`;
  console.error(`ingest: ${conditions}; ${result.acked} messages acknowledged and stored, ${batches} transactions`);
  report(BENCH, 'events_per_second', (result.ackedInWindow * eventsPerMessage) / (result.elapsedMs / 1000), 'events/s', 45000, '>=');
  report(BENCH, 'messages_per_second', result.ackedInWindow / (result.elapsedMs / 1000), 'messages/s');
  report(BENCH, 'puback_latency_p50', result.p50, 'ms');
  report(BENCH, 'puback_latency_p99', result.p99, 'ms');
  report(BENCH, 'messages_per_transaction', (ingest.messages - statsStart.messages) / Math.max(1, batches), 'messages');
  report(BENCH, 'server_cpu', ((cpu.user + cpu.system) / 1000 / wallMs) * 100, '% of one core');
  report(BENCH, 'load_generator_cpu', (result.cpuMs / wallMs) * 100, '% of one core');
  report(BENCH, 'wal_size_at_end', statSync(join(dataDir, 'scanhub.db-wal')).size / 1048576, 'MiB');
  report(BENCH, 'server_cpu_per_message', ((cpu.user + cpu.system) / result.acked), 'µs');
  report(BENCH, 'load_generator_cpu_per_message', (result.cpuMs * 1000) / result.acked, 'µs');
} finally {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
}
