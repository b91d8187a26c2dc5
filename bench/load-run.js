// Runs the MQTT load generator (bench/mqtt-load.js, its own process) against a server started in
// this process: gateways inserted straight into the table with certificates from the deployment
// CA, 1 event per QoS 1 message, `window` messages in flight per gateway. Shared by the
// benchmarks that measure ingest while something else runs (exports, job analyses).
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { issueClientCertificateAsync, randomSerialHex } from '../dist/pki/ca.js';

/** Creates `count` gateways named `{prefix}-{i}` of the customer with issued client certificates. */
export async function loadGateways(server, customer, count, prefix) {
  const db = server.ctx.store.db;
  const ca = server.ctx.ca;
  const now = Date.now();
  const insert = db.prepare('INSERT INTO gateways (id, customer_id, name, usecase, station, created, last_updated) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const gateways = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const id = randomUUID();
      insert.run(id, customer, `${prefix}-${i}`, 'picking', `station-${i % 10}`, now, now);
      const issued = await issueClientCertificateAsync(ca, id, randomSerialHex());
      return { id, topic: `scanhub/${customer}/gateway/${id}`, keyPem: issued.keyPem, certPem: issued.certPem };
    }),
  );
  return { ca, gateways };
}

/**
 * One run of the load generator: connect, warm up 2 s, call `onStart`, publish for `durationMs`;
 * resolves with the events/s acknowledged (= committed) in that window.
 */
export async function runLoad(server, { ca, gateways }, durationMs, { window = 16, onStart = async () => {} } = {}) {
  const load = fork(new URL('./mqtt-load.js', import.meta.url), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const messages = [];
  let waiting;
  load.on('message', (message) => (waiting ? (waiting(message), (waiting = undefined)) : messages.push(message)));
  const next = () => (messages.length ? Promise.resolve(messages.shift()) : new Promise((resolve) => (waiting = resolve)));
  load.send({ host: '127.0.0.1', port: server.mqttPort, caPem: ca.certPem, gateways, window, eventsPerMessage: 1, warmupMs: 2000, durationMs });
  const connected = await next();
  if (connected.type !== 'connected') throw new Error(`load generator: ${JSON.stringify(connected)}`);
  await onStart();
  load.send('start');
  const result = await next();
  load.kill();
  return result.ackedInWindow / (result.elapsedMs / 1000);
}
