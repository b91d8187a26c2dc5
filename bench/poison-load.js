// The load generator of ingest-poison.bench.js (and retention.bench.js), its own process: N gateways
// publish scans QoS 1 at a steady rate each (timestamped, PUBACK latency measured), and in the poison phase one more
// gateway publishes poison (nesting bombs, oversize strings, too many events, bad `created`, bad
// UTF-8, not JSON) as fast as its window of unacknowledged messages allows. Minimal MQTT 3.1.1
// over tls.connect with each gateway's PKCS#12. Talks to the parent over IPC: config in,
// 'connected', then one { phase, durationMs } per phase in, its results out.
import { randomUUID } from 'node:crypto';
import { connect } from 'node:tls';
import { connectPacket, publishPacket } from './mqtt-packets.js';

const deep = (levels) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
/** What the poisoning gateway sends, in turn; each refused before or while it is parsed. */
const POISON = [
  deep(100_000),
  `{"type":${deep(100_000)}}`,
  JSON.stringify({ type: 'scan', scan_code: 'x'.repeat(200_000) }),
  JSON.stringify(Array.from({ length: 10_000 }, () => ({ type: 'scan' }))),
  JSON.stringify({ type: 'scan', device_id: 'd'.repeat(200_000) }),
  JSON.stringify({ type: 'scan', created: 2 ** 53 - 1 }),
  Buffer.concat([Buffer.from('{"type":"scan","scan_code":"'), Buffer.from([0xfe, 0xff]), Buffer.from('"}')]),
  '{"type": "scan",',
].map((payload) => Buffer.from(payload));

/** One gateway's connection: publish() sends QoS 1 and calls back with the latency once the PUBACK arrives. */
function openGateway(config, gateway) {
  const inFlight = new Map();
  let nextId = 1;
  let pending = Buffer.alloc(0);
  let closed = false;
  const socket = connect({ host: config.host, port: config.port, pfx: Buffer.from(gateway.pfx, 'base64'), passphrase: '', servername: 'localhost' });
  socket.setNoDelay(true);
  const connected = new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.once('secureConnect', () => socket.write(connectPacket(gateway.id)));
    socket.on('data', (chunk) => {
      let data = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      let offset = 0;
      const now = performance.now();
      // The server sends only CONNACK and PUBACK: 2-byte bodies, one length byte.
      while (data.length - offset >= 4) {
        const type = data[offset] >> 4;
        if (type === 2) {
          if (data[offset + 3] !== 0) reject(new Error(`CONNACK ${data[offset + 3]} for ${gateway.id}`));
          else resolve();
        } else if (type === 4) {
          const id = (data[offset + 2] << 8) | data[offset + 3];
          const sent = inFlight.get(id);
          inFlight.delete(id);
          sent?.done(now - sent.at);
        }
        offset += 4;
      }
      pending = data.subarray(offset);
    });
  });
  // A closed connection is counted (closed()); its error is not the load generator's end.
  socket.on('error', () => {});
  socket.on('close', () => (closed = true));
  return {
    connected,
    closed: () => closed,
    inFlight: () => inFlight.size,
    publish(payload, done) {
      while (inFlight.has(nextId)) nextId = (nextId % 65535) + 1;
      const id = nextId;
      nextId = (nextId % 65535) + 1;
      inFlight.set(id, { at: performance.now(), done });
      socket.write(publishPacket(gateway.topic, id, payload));
    },
    close: () => socket.destroy(),
  };
}

/** A scan as a real device sends it: its own id, the time of the scan. */
const scan = (index) =>
  Buffer.from(JSON.stringify({ id: randomUUID(), type: 'scan', created: Date.now(), scan_code: `4006381333931-${index}`, scan_decode_symbology: 'EAN-13', device_id: `scanner-${index}`, device_battery: 87 }));

/** Runs one phase: every gateway at `rate` messages/s, the poisoner as fast as it can if asked; then drains. */
async function runPhase(config, normal, poisoner, durationMs) {
  const latencies = [];
  let sent = 0;
  let acknowledged = 0;
  let poisonSent = 0;
  let poisonAcknowledged = 0;
  let poisonBytes = 0;
  let sending = true;
  const started = performance.now();
  // Paced by the clock, not by timer ticks: a late tick sends what fell due meanwhile.
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - started) / 1000) * config.rate);
    normal.forEach((gateway, index) => {
      while (gateway.sent < due) {
        gateway.sent++;
        sent++;
        gateway.connection.publish(scan(index), (ms) => {
          acknowledged++;
          latencies.push(ms);
        });
      }
    });
  }, 5);
  const sendPoison = () => {
    if (!sending) return;
    const payload = POISON[poisonSent++ % POISON.length];
    poisonBytes += payload.length;
    poisoner.publish(payload, () => {
      poisonAcknowledged++;
      sendPoison();
    });
  };
  if (poisoner) for (let i = 0; i < config.poisonWindow; i++) sendPoison();
  await new Promise((resolve) => setTimeout(resolve, durationMs));
  clearInterval(timer);
  sending = false;
  const elapsedMs = performance.now() - started;
  // Every message sent must be acknowledged: wait for the last PUBACKs (or a closed connection).
  const drainStart = performance.now();
  while (normal.some((g) => g.connection.inFlight() > 0 && !g.connection.closed()) && performance.now() - drainStart < 30_000) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  for (const gateway of normal) gateway.sent = 0;
  latencies.sort((a, b) => a - b);
  const at = (p) => latencies[Math.min(latencies.length - 1, Math.max(0, Math.ceil((p / 100) * latencies.length) - 1))];
  return {
    sent,
    acknowledged,
    p50: at(50),
    p99: at(99),
    max: latencies[latencies.length - 1],
    closed: normal.filter((g) => g.connection.closed()).length + (poisoner?.closed() ? 1 : 0),
    poisonSent,
    poisonAcknowledged,
    poisonBytes,
    elapsedMs,
  };
}

process.once('message', async (config) => {
  const normal = config.gateways.map((gateway) => ({ connection: openGateway(config, gateway), sent: 0 }));
  // Without a poisonGateway (retention.bench.js) every phase is clean.
  const poisoner = config.poisonGateway && openGateway(config, config.poisonGateway);
  await Promise.all([...normal.map((g) => g.connection.connected), poisoner?.connected]);
  process.send({ type: 'connected' });
  process.on('message', async (message) => {
    if (message === 'close') {
      normal.forEach((g) => g.connection.close());
      poisoner?.close();
      process.disconnect();
      return;
    }
    const result = await runPhase(config, normal, message.phase === 'poison' ? poisoner : undefined, message.durationMs);
    process.send({ type: 'result', phase: message.phase, ...result });
  });
});
