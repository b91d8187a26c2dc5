// The gateway side of commands.bench.js, in its own process: N gateways over raw TLS, each
// subscribed to its command topic, acknowledging every command PUBLISH at once (PUBACK) and,
// when asked, answering SUCCEEDED on command-responses. Talks to the parent over IPC: config in;
// 'connect' in, { type: 'connected', seconds } out; { wait: n } in, { type: 'received', ... } out
// once n commands arrived in all (with each one's arrival time); 'close' in.
import { connect, createSecureContext } from 'node:tls';
import { varint } from './mqtt-packets.js';

const RETRY_MS = 1000;

const mqttString = (text) => {
  const bytes = Buffer.from(text);
  return Buffer.concat([Buffer.from([bytes.length >> 8, bytes.length & 255]), bytes]);
};
const packet = (first, body) => Buffer.concat([Buffer.from([first]), varint(body.length), body]);
const connectPacket = (clientId, clean) => packet(0x10, Buffer.concat([mqttString('MQTT'), Buffer.from([4, clean ? 0x02 : 0, 0, 60]), mqttString(clientId)]));
const subscribePacket = (topic) => packet(0x82, Buffer.concat([Buffer.from([0, 1]), mqttString(topic), Buffer.from([1])]));
const pubackPacket = (id) => Buffer.from([0x40, 2, id >> 8, id & 255]);

let config;
/** command_id -> epoch ms at arrival (its PUBACK goes out in the same turn). */
const arrivals = new Map();
let duplicates = 0;
let waiter;
const sockets = [];

function checkWaiter() {
  if (waiter && arrivals.size >= waiter.count) {
    const { count } = waiter;
    waiter = undefined;
    process.send({ type: 'received', count, duplicates, arrivals: [...arrivals] });
  }
}

/** One gateway's connection: resolves once its SUBACK arrived (or at CONNACK when `subscribe` is false). */
function open(gateway) {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: config.host, port: config.port, localAddress: gateway.address, secureContext: gateway.context, servername: 'localhost' });
    socket.setNoDelay(true);
    let pending = Buffer.alloc(0);
    let nextId = 1;
    socket.once('error', reject);
    socket.once('close', () => reject(new Error('closed')));
    socket.once('secureConnect', () => socket.write(connectPacket(gateway.id, config.clean)));
    socket.on('data', (chunk) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      for (;;) {
        if (pending.length < 2) return;
        let remaining = 0;
        let multiplier = 1;
        let at = 1;
        for (;;) {
          if (at >= pending.length) return;
          const byte = pending[at++];
          remaining += (byte & 127) * multiplier;
          multiplier *= 128;
          if (!(byte & 128)) break;
        }
        if (pending.length < at + remaining) return;
        const first = pending[0];
        const body = pending.subarray(at, at + remaining);
        pending = pending.subarray(at + remaining);
        const type = first >> 4;
        if (type === 2) {
          if (body[1] !== 0) return reject(new Error(`CONNACK ${body[1]}`));
          if (config.subscribe) socket.write(subscribePacket(`${gateway.topic}/commands`));
          else resolve(socket);
        } else if (type === 9) {
          resolve(socket);
        } else if (type === 3) {
          const topicEnd = 2 + body.readUInt16BE(0);
          const id = body.readUInt16BE(topicEnd);
          socket.write(pubackPacket(id));
          const message = JSON.parse(body.toString('utf8', topicEnd + 2));
          if (arrivals.has(message.command_id)) duplicates++;
          else arrivals.set(message.command_id, Date.now());
          if (config.respond) {
            nextId = (nextId % 65535) + 1;
            const response = Buffer.from(JSON.stringify({ command_id: message.command_id, status: 'SUCCEEDED' }));
            socket.write(packet(0x32, Buffer.concat([mqttString(`${gateway.topic}/command-responses`), Buffer.from([nextId >> 8, nextId & 255]), response])));
          }
          checkWaiter();
        }
      }
    });
  });
}

/** Opens the gateway's connection, retrying after RETRY_MS as a device would; the tries it took. */
async function openWithRetries(gateway) {
  for (let tries = 1; ; tries++) {
    try {
      sockets.push(await open(gateway));
      return tries;
    } catch (error) {
      if (tries >= 30) throw error;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}

process.on('message', async (message) => {
  if (message === 'connect') {
    const started = performance.now();
    const tries = await Promise.all(config.gateways.map(openWithRetries));
    process.send({ type: 'connected', seconds: (performance.now() - started) / 1000, retries: tries.filter((t) => t > 1).length });
  } else if (message === 'close') {
    for (const socket of sockets) socket.destroy();
    process.exit(0);
  } else if (message.wait !== undefined) {
    waiter = { count: message.wait };
    checkWaiter();
  } else {
    config = message;
    // Each device connects from an address of its own (127.2.x.y): from one address the cap on
    // unauthenticated connections per source would refuse a storm (as reconnect-storm.bench.js).
    for (const [i, gateway] of config.gateways.entries()) {
      gateway.address = `127.2.${(i >> 8) & 255}.${i & 255}`;
      gateway.context = createSecureContext({ key: gateway.keyPem, cert: gateway.certPem, ca: config.caPem });
    }
    process.send({ type: 'ready' });
  }
});
