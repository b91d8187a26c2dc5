// The client side of reconnect-storm.bench.js, in its own process: N gateways connect at once and
// each publishes one QoS 1 message, retrying after 1 s as a device would; or `steady` gateways that
// keep publishing and report their longest PUBACK wait (run in a process of their own: the storm's
// handshakes would hold their PUBACKs back; bench/README.md "reconnect-storm"). Talks to the parent
// over IPC: config in, 'ready' out, 'storm' in, ('stop' in,) results out, 'close' in.
import { connect, createSecureContext } from 'node:tls';
import { connectPacket, publishPacket } from './mqtt-packets.js';

const RETRY_MS = 1000;
const STEADY_INTERVAL_MS = 100;

/** Opens one gateway's connection; resolves after CONNACK 0 with `publish()`, which resolves at its PUBACK. */
function open(config, gateway) {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: config.host, port: config.port, localAddress: gateway.address, secureContext: gateway.context, servername: 'localhost' });
    socket.setNoDelay(true);
    let pending = Buffer.alloc(0);
    let packetId = 0;
    const waiting = new Map();
    const connection = {
      socket,
      publish() {
        packetId = (packetId % 65535) + 1;
        const id = packetId;
        socket.write(publishPacket(gateway.topic, id, Buffer.from(JSON.stringify({ type: 'scan', scan_code: `storm-${id}` }))));
        return new Promise((done) => waiting.set(id, done));
      },
    };
    socket.once('error', reject);
    socket.once('close', () => reject(new Error('closed')));
    socket.once('secureConnect', () => socket.write(connectPacket(gateway.id)));
    socket.on('data', (chunk) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      while (pending.length >= 4) {
        const type = pending[0] >> 4;
        if (type === 2) {
          if (pending[3] !== 0) reject(new Error(`CONNACK ${pending[3]}`));
          else resolve(connection);
        } else if (type === 4) {
          const id = (pending[2] << 8) | pending[3];
          waiting.get(id)?.(performance.now());
          waiting.delete(id);
        }
        pending = pending.subarray(4);
      }
    });
  });
}

process.once('message', async (config) => {
  // A device has its key and certificate loaded before it reconnects: each gateway's PKCS#12 is
  // opened once here, before the storm, so that the storm's client CPU is the handshake and MQTT
  // (opened per connection, it made this process the bottleneck).
  // Each device connects from an address of its own (127.1.x.y on loopback), as a fleet does: from one
  // address, the server's cap on unauthenticated connections per source (1,000) would refuse the rest.
  for (const [i, gateway] of [...config.steady, ...config.storm].entries()) {
    gateway.address = `127.1.${(i >> 8) & 255}.${i & 255}`;
    gateway.context = createSecureContext({ pfx: Buffer.from(gateway.pfx, 'base64'), passphrase: '', ca: config.caPem });
  }
  const steady = await Promise.all(config.steady.map((gateway) => open(config, gateway)));
  process.send({ type: 'ready' });
  await new Promise((resolve) => process.once('message', resolve));

  let measuring = true;
  let steadyMaxPubackMs = 0;
  let steadyMessages = 0;
  // Each steady gateway: one message every 100 ms, the next only after the PUBACK of the last.
  const steadyLoops = steady.map(async (connection) => {
    while (measuring) {
      const sent = performance.now();
      const acked = await connection.publish();
      steadyMessages++;
      steadyMaxPubackMs = Math.max(steadyMaxPubackMs, acked - sent);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, STEADY_INTERVAL_MS - (performance.now() - sent))));
    }
  });

  if (config.storm.length === 0) {
    await new Promise((resolve) => process.once('message', resolve));
    measuring = false;
    await Promise.all(steadyLoops);
    process.send({ type: 'result', steadyMessages, steadyMaxPubackMs });
    await new Promise((resolve) => process.once('message', resolve));
    for (const connection of steady) connection.socket.destroy();
    process.exit(0);
  }

  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let retries = 0;
  let failedForGood = 0;
  const stormConnections = [];
  const attempt = async (gateway, tries) => {
    try {
      const connection = await open(config, gateway);
      stormConnections.push(connection);
      return await connection.publish();
    } catch {
      if (tries >= config.maxTries) {
        failedForGood++;
        return undefined;
      }
      retries++;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      return attempt(gateway, tries + 1);
    }
  };
  const acked = await Promise.all(config.storm.map((gateway) => attempt(gateway, 1)));
  const cpu = process.cpuUsage(cpuBefore);
  measuring = false;
  await Promise.all(steadyLoops);
  const done = acked.filter((at) => at !== undefined);
  process.send({
    type: 'result',
    seconds: (Math.max(...done) - started) / 1000,
    connected: done.length,
    retries,
    failedForGood,
    steadyMessages,
    steadyMaxPubackMs,
    clientCpuMs: (cpu.user + cpu.system) / 1000,
  });
  await new Promise((resolve) => process.once('message', resolve));
  for (const connection of [...stormConnections, ...steady]) connection.socket.destroy();
  process.exit(0);
});
