// The publisher of stream.bench.js, its own process: gateways over mutual TLS (a minimal MQTT
// 3.1.1 client, bench/mqtt-packets.js) publishing QoS 1 at a steady rate, round robin, each
// event's scan_code carrying its publish time (`t<epoch ms with microseconds>`) so that the
// stream's readers can tell how long it took to reach them. Talks to the parent over IPC:
// config in, 'connected', 'start', then { type: 'result' } when it has published for the time asked.
import { randomUUID } from 'node:crypto';
import { connect } from 'node:tls';
import { connectPacket, publishPacket } from './mqtt-packets.js';

/** Milliseconds since the epoch with microseconds: the readers' clock is the same machine's. */
const now = () => performance.timeOrigin + performance.now();

function openGateway(config, gateway) {
  const socket = connect({ host: config.host, port: config.port, key: gateway.keyPem, cert: gateway.certPem, ca: config.caPem, servername: 'localhost' });
  socket.setNoDelay(true);
  const sentAt = new Map();
  let nextId = 1;
  let pending = Buffer.alloc(0);
  let ready;
  const connected = new Promise((resolve, reject) => (ready = { resolve, reject }));
  const state = { inFlight: 0, acked: 0, pubackLatencies: [], measuring: false, refused: 0 };
  socket.on('error', (error) => ready.reject(error));
  socket.once('secureConnect', () => socket.write(connectPacket(gateway.id)));
  socket.on('data', (chunk) => {
    const data = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let offset = 0;
    while (data.length - offset >= 2) {
      const length = data[offset + 1];
      if (data.length - offset < 2 + length) break;
      const type = data[offset] >> 4;
      if (type === 2) {
        if (data[offset + 3] !== 0) ready.reject(new Error(`CONNACK ${data[offset + 3]} for ${gateway.id}`));
        else ready.resolve();
      } else if (type === 4) {
        const packetId = (data[offset + 2] << 8) | data[offset + 3];
        const sent = sentAt.get(packetId);
        sentAt.delete(packetId);
        state.inFlight--;
        state.acked++;
        if (state.measuring && sent !== undefined) state.pubackLatencies.push(now() - sent);
      }
      offset += 2 + length;
    }
    pending = offset < data.length ? data.subarray(offset) : Buffer.alloc(0);
  });
  return {
    connected,
    state,
    /** Publishes `count` events in one message; false when too many wait for their PUBACK (the server does not keep up). */
    publish(count, measuring) {
      if (state.inFlight >= config.window) {
        state.refused++;
        return false;
      }
      const at = now();
      const events = Array.from({ length: count }, () => ({ id: randomUUID(), type: 'scan', scan_code: `t${at.toFixed(3)}` }));
      const packetId = nextId;
      nextId = nextId === 65535 ? 1 : nextId + 1;
      sentAt.set(packetId, at);
      state.inFlight++;
      state.measuring = measuring;
      socket.write(publishPacket(gateway.topic, packetId, Buffer.from(JSON.stringify(count === 1 ? events[0] : events))));
      return true;
    },
    close: () => socket.destroy(),
  };
}

process.once('message', async (config) => {
  const gateways = config.gateways.map((gateway) => openGateway(config, gateway));
  await Promise.all(gateways.map((g) => g.connected));
  process.send({ type: 'connected' });
  await new Promise((resolve) => process.once('message', resolve));

  // A tick every 5 ms publishes what the rate owes by then: steady, whatever the timer's jitter.
  const perMessage = config.eventsPerMessage;
  const started = performance.now();
  const warmupEnd = started + config.warmupMs;
  const end = warmupEnd + config.durationMs;
  let published = 0;
  let publishedInWindow = 0;
  let skipped = 0;
  let next = 0;
  await new Promise((resolve) => {
    const tick = () => {
      const t = performance.now();
      if (t >= end) return resolve();
      const owed = Math.floor(((t - started) / 1000) * config.rate) - published - skipped;
      for (let i = 0; i + perMessage <= owed; i += perMessage) {
        const measuring = t >= warmupEnd;
        if (gateways[next].publish(perMessage, measuring)) {
          published += perMessage;
          if (measuring) publishedInWindow += perMessage;
        } else skipped += perMessage;
        next = (next + 1) % gateways.length;
      }
      setTimeout(tick, 5);
    };
    tick();
  });
  const elapsedMs = performance.now() - warmupEnd;
  // Drain: every message acknowledged (the stream readers then count what reached them).
  await new Promise((resolve) => {
    const check = () => (gateways.every((g) => g.state.inFlight === 0) ? resolve() : setTimeout(check, 10));
    check();
  });
  const pubacks = gateways.flatMap((g) => g.state.pubackLatencies).sort((a, b) => a - b);
  const at = (p) => pubacks[Math.min(pubacks.length - 1, Math.max(0, Math.ceil((p / 100) * pubacks.length) - 1))];
  process.send({
    type: 'result',
    published,
    publishedInWindow,
    skipped,
    elapsedMs,
    pubackP50: at(50),
    pubackP99: at(99),
  });
  gateways.forEach((g) => g.close());
  process.disconnect();
});
