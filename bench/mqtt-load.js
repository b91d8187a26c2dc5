// The load generator of ingest.bench.js, run as its own process so the server process is measured
// alone. A minimal MQTT 3.1.1 client over tls.connect: CONNECT, then PUBLISH QoS 1 from
// pre-encoded packets, keeping `window` messages in flight per connection and refilling as PUBACKs
// arrive. Each event gets a unique id (written in place into the packet) so every acknowledged
// message is one stored event. Talks to the parent over IPC: config in, 'connected', 'start',
// results out.
import { randomBytes } from 'node:crypto';
import { connect } from 'node:tls';
import { percentile } from './lib.js';
import { connectPacket, varint } from './mqtt-packets.js';

const HEX = '0123456789abcdef';
/**
 * Four hex digits of this process's own in every event id: a second run against the same
 * deployment sends new events, not copies of the first run's (which would be stored once).
 */
const RUN = randomBytes(2).toString('hex');

/** A PUBLISH QoS 1 template with offsets of the packet id, the event id's counter and `created`. */
function publishTemplate(topic, gatewayIndex, eventsPerMessage) {
  const events = [];
  for (let e = 0; e < eventsPerMessage; e++) {
    events.push({
      // The gateway's index in three hex digits: ids stay UUIDs for up to 4,096 gateways.
      id: `RRRRRRRR-${RUN}-4000-8${gatewayIndex.toString(16).padStart(3, '0')}-${String(e).padStart(2, '0')}CCCCCCCCCC`,
      class: 'event',
      type: 'scan',
      created: 1700000000000,
      scan_code: `4006381333931-${gatewayIndex}`,
      scan_duration: 142,
      scan_decode_symbology: 'EAN-13',
      device_id: `scanner-${gatewayIndex}-a`,
      device_battery: 87,
      device_firmware: '2.4.1',
      device_temperature: 31.5,
    });
  }
  const json = JSON.stringify(eventsPerMessage === 1 ? events[0] : events);
  const payload = Buffer.from(json);
  const topicBytes = Buffer.from(topic);
  const remaining = 2 + topicBytes.length + 2 + payload.length;
  const header = Buffer.concat([Buffer.from([0x32]), varint(remaining)]);
  const packet = Buffer.concat([header, Buffer.from([topicBytes.length >> 8, topicBytes.length & 255]), topicBytes, Buffer.from([0, 0]), payload]);
  const payloadStart = header.length + 2 + topicBytes.length + 2;
  const counters = [];
  const randoms = [];
  const created = [];
  let at = 0;
  while ((at = json.indexOf('RRRRRRRR', at)) !== -1) randoms.push(payloadStart + at), (at += 8);
  at = 0;
  while ((at = json.indexOf('CCCCCCCCCC', at)) !== -1) counters.push(payloadStart + at), (at += 10);
  at = 0;
  while ((at = json.indexOf('1700000000000', at)) !== -1) created.push(payloadStart + at), (at += 13);
  return { packet, packetIdAt: payloadStart - 2, counters, randoms, created };
}

/**
 * The first 8 hex digits of an event id: every bit depends on the gateway's message counter, the
 * gateway and the event's place in the message (murmur3's finalizer, a bijection of 32 bits), so
 * that the ids of one batch fall all over an index of ids, as devices' random v4 UUIDs do; a hash
 * of the counter alone flattered such an index (bench/README.md "ingest-vs-mosquitto").
 */
function scatter(counter, index, r) {
  return fmix32((fmix32(counter >>> 0) ^ ((index << 6) | r)) >>> 0);
}

function fmix32(h) {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function writeHex(buffer, offset, value, digits) {
  for (let i = digits - 1; i >= 0; i--) {
    buffer[offset + i] = HEX.charCodeAt(value & 15);
    value = Math.floor(value / 16);
  }
}

function runConnection(config, gateway, index, shared) {
  const template = publishTemplate(gateway.topic, index, config.eventsPerMessage);
  const size = template.packet.length;
  const window = config.window;
  const sentAt = new Float64Array(window);
  let counter = 0;
  let inFlight = 0;
  let pending = Buffer.alloc(0);
  let ready;
  const connected = new Promise((resolve, reject) => (ready = { resolve, reject }));
  const socket = connect({
    host: config.host,
    port: config.port,
    // A device's PKCS#12 as POST /provisioning returns it, or the PEM pair of a certificate issued here.
    ...(gateway.pfx ? { pfx: Buffer.from(gateway.pfx, 'base64'), passphrase: '' } : { key: gateway.keyPem, cert: gateway.certPem }),
    ca: config.caPem,
    servername: 'localhost',
  });
  socket.setNoDelay(true);
  socket.on('error', (error) => ready.reject(error));
  socket.once('secureConnect', () => socket.write(connectPacket(gateway.id)));

  // Sends PUBLISHes for the free slots (all packet ids in `slots`) in one write; with a rate, as many as its budget allows, the rest later.
  function send(slots) {
    if (!shared.sending || slots.length === 0) return;
    if (shared.budget !== undefined) {
      const allowed = shared.budget.take(slots.length);
      const later = slots.slice(allowed);
      if (later.length > 0) shared.budget.waiting.push(() => send(later));
      slots = slots.slice(0, allowed);
      if (slots.length === 0) return;
    }
    const out = Buffer.allocUnsafe(size * slots.length);
    const now = performance.now();
    const created = Date.now();
    for (let s = 0; s < slots.length; s++) {
      const base = s * size;
      template.packet.copy(out, base);
      const packetId = slots[s];
      out[base + template.packetIdAt] = packetId >> 8;
      out[base + template.packetIdAt + 1] = packetId & 255;
      for (const offset of template.counters) writeHex(out, base + offset, counter, 10);
      // Scatter the ids over the key space like random UUIDs, so the unique index sees realistic inserts.
      for (let r = 0; r < template.randoms.length; r++) {
        writeHex(out, base + template.randoms[r], scatter(counter, index, r), 8);
      }
      for (const offset of template.created) out.write(String(created), base + offset, 'latin1');
      counter++;
      sentAt[packetId - 1] = now;
    }
    inFlight += slots.length;
    shared.sent += slots.length;
    socket.write(out);
  }

  let connackSeen = false;
  socket.on('data', (chunk) => {
    let data = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let offset = 0;
    const free = [];
    const now = performance.now();
    while (data.length - offset >= 2) {
      const type = data[offset] >> 4;
      const length = data[offset + 1]; // PUBACK and CONNACK are 2 bytes long: one length byte.
      if (data.length - offset < 2 + length) break;
      if (type === 4) {
        const packetId = (data[offset + 2] << 8) | data[offset + 3];
        inFlight--;
        shared.acked++;
        if (shared.measuring) {
          shared.ackedInWindow++;
          if (shared.latencyCount < shared.latencies.length) shared.latencies[shared.latencyCount++] = now - sentAt[packetId - 1];
        }
        free.push(packetId);
      } else if (type === 2 && !connackSeen) {
        connackSeen = true;
        if (data[offset + 3] !== 0) ready.reject(new Error(`CONNACK ${data[offset + 3]} for ${gateway.id}`));
        else ready.resolve();
      }
      offset += 2 + length;
    }
    pending = offset < data.length ? data.subarray(offset) : Buffer.alloc(0);
    send(free);
    if (inFlight === 0 && !shared.sending) shared.onIdle();
  });
  let closing = false;
  // Closed by serve with messages unacknowledged: the drain would wait for them forever, so the run fails here, saying so.
  socket.on('close', () => {
    if (closing || inFlight === 0) return;
    console.error(`mqtt-load: serve closed the connection of ${gateway.id} with ${inFlight} messages unacknowledged`);
    process.exit(3);
  });
  return {
    connected,
    start: () => send(Array.from({ length: window }, (_, i) => i + 1)),
    inFlight: () => inFlight,
    close: () => ((closing = true), socket.destroy()),
  };
}

process.once('message', async (config) => {
  if (config.gateways.length > 4096) throw new Error(`at most 4,096 gateways (event ids carry the index in three hex digits), not ${config.gateways.length}`);
  const shared = {
    sending: false,
    measuring: false,
    sent: 0,
    acked: 0,
    ackedInWindow: 0,
    latencies: new Float64Array(4_000_000),
    latencyCount: 0,
    onIdle: () => {},
  };
  if (config.rate > 0) shared.budget = rateBudget(config.rate / config.eventsPerMessage);
  const connections = config.gateways.map((gateway, i) => runConnection(config, gateway, i, shared));
  await Promise.all(connections.map((c) => c.connected));
  process.send({ type: 'connected' });
  await new Promise((resolve) => process.once('message', resolve));

  const cpuStart = process.cpuUsage();
  shared.sending = true;
  connections.forEach((c) => c.start());
  // 'mark' (after 'start'): the acknowledgements so far and the PUBACK latencies since the last
  // mark, for a parent that measures phases of its own choosing (bench/backup.bench.js).
  process.on('message', (message) => {
    // 'acked': the acknowledgements so far alone (bench/webhooks.bench.js's floor sender follows them).
    if (message === 'acked') return process.send({ type: 'acked', acked: shared.acked });
    if (message !== 'mark') return;
    const since = shared.latencies.subarray(0, shared.latencyCount);
    process.send({ type: 'mark', acked: shared.acked, at: performance.now(), p50: percentile(since, 50), p99: percentile(since, 99), max: percentile(since, 100) });
    shared.latencyCount = 0;
  });
  await new Promise((resolve) => setTimeout(resolve, config.warmupMs));
  shared.measuring = true;
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, config.durationMs));
  shared.measuring = false;
  const elapsedMs = performance.now() - started;
  shared.sending = false;
  // Drain: wait until every message sent has been acknowledged.
  await new Promise((resolve) => {
    const check = () => connections.every((c) => c.inFlight() === 0) && resolve();
    shared.onIdle = check;
    check();
  });
  const cpu = process.cpuUsage(cpuStart);
  const latencies = shared.latencies.subarray(0, shared.latencyCount);
  process.send({
    type: 'result',
    sent: shared.sent,
    acked: shared.acked,
    ackedInWindow: shared.ackedInWindow,
    elapsedMs,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: percentile(latencies, 100),
    cpuMs: (cpu.user + cpu.system) / 1000,
  });
  connections.forEach((c) => c.close());
  process.disconnect();
});

/** Messages per second for all connections together: slots wait for the budget, refilled every 5 ms, and are sent in the order they waited. */
function rateBudget(perSecond) {
  let tokens = 0;
  let last = performance.now();
  const budget = {
    waiting: [],
    take(wanted) {
      const taken = Math.min(wanted, Math.floor(tokens));
      tokens -= taken;
      return taken;
    },
  };
  setInterval(() => {
    const now = performance.now();
    // At most 50 ms of budget saved up: a stall is not made up by a burst.
    tokens = Math.min(tokens + ((now - last) / 1000) * perSecond, perSecond / 20);
    last = now;
    const waiting = budget.waiting.splice(0);
    for (const resume of waiting) resume();
  }, 5).unref();
  return budget;
}
