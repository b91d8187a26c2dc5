// The `floor` phase of bench/commands.bench.js (bench/README.md "commands"): a bare MQTT-over-TLS
// command server, no scanhub code, that does for the sustained load only what the protocol needs,
// so that ingest alone beside it shows the best ratio any serve could reach with these gateways on
// this machine. node:tls with serve's own server pair and the deployment's CA, client certificates
// required (mutual TLS, as serve's listener), no session tickets; it answers CONNECT (CONNACK 0)
// and SUBSCRIBE (SUBACK granting QoS 1), publishes the commands at QoS 1, one PUBLISH per TLS write,
// the same JSON as serve's command message (src/domain/commands.ts `commandMessage`), reads their
// PUBACKs and the gateways' QoS 1 responses, and PUBACKs those. It stores nothing: it counts.
// IPC in: `{ certPem, keyPem, caPem, rate, tickMs }` once, then 'start', 'stop', 'close'.
// Out: `{ type: 'listening', port }`; after 'stop', once every command sent has its PUBACK and its
// response, `{ type: 'stopped', sent, seconds, pubacks, succeeded, subscribed }`.
import { constants, randomUUID } from 'node:crypto';
import { createServer } from 'node:tls';
import { frameOf, publishPacket } from './mqtt-packets.js';

const TTL_MS = 10 * 60 * 1000;
const PARAMETERS = { sequence: 'OK' };

/** Connections that subscribed, in the order they did: `{ socket, topic, nextId }`. */
const subscribed = [];
let config;
let sent = 0;
let pubacks = 0;
let succeeded = 0;
let timer;
let stopping;
let startedAt = 0;
let stoppedAt = 0;

/** One command PUBLISH (QoS 1) to the gateway, as serve's outbox builds it. */
function publish(gateway) {
  gateway.nextId = (gateway.nextId % 65535) + 1;
  const created = Date.now();
  const payload = Buffer.from(JSON.stringify({ command_id: randomUUID(), name: 'feedback', parameters: PARAMETERS, created, expires_at: created + TTL_MS }));
  gateway.socket.write(publishPacket(gateway.topic, gateway.nextId, payload));
  sent++;
}

/** `rate x tickMs / 1000` commands each tick, round the subscribed gateways, on the tick's schedule. */
function tick(index) {
  const perTick = (config.rate * config.tickMs) / 1000;
  for (let i = 0; i < perTick; i++) publish(subscribed[sent % subscribed.length]);
  timer = setTimeout(() => tick(index + 1), Math.max(0, startedAt + (index + 1) * config.tickMs - performance.now()));
}

function checkStopped() {
  if (stopping && pubacks >= sent && succeeded >= sent) {
    stopping = undefined;
    process.send({ type: 'stopped', sent, seconds: (stoppedAt - startedAt) / 1000, pubacks, succeeded, subscribed: subscribed.length });
  }
}

/** A gateway's packets: CONNECT, SUBSCRIBE, PUBACK of a command, PUBLISH of a response, PINGREQ. */
function onPacket(gateway, first, body) {
  const type = first >> 4;
  if (type === 1) gateway.socket.write(Buffer.from([0x20, 2, 0, 0]));
  else if (type === 8) {
    // The filter is the gateway's command topic (commands-client.js subscribes to nothing else).
    gateway.topic = body.toString('utf8', 4, 4 + body.readUInt16BE(2));
    subscribed.push(gateway);
    gateway.socket.write(Buffer.from([0x90, 3, body[0], body[1], 1]));
  } else if (type === 4) pubacks++;
  else if (type === 3) {
    const topicEnd = 2 + body.readUInt16BE(0);
    gateway.socket.write(Buffer.from([0x40, 2, body[topicEnd], body[topicEnd + 1]]));
    if (JSON.parse(body.toString('utf8', topicEnd + 2)).status === 'SUCCEEDED') succeeded++;
  } else if (type === 12) gateway.socket.write(Buffer.from([0xd0, 0]));
  else if (type === 14) gateway.socket.end();
}

function listen() {
  const server = createServer(
    { key: config.keyPem, cert: config.certPem, ca: config.caPem, requestCert: true, rejectUnauthorized: true, secureOptions: constants.SSL_OP_NO_TICKET },
    (socket) => {
      socket.setNoDelay(true);
      const gateway = { socket, topic: undefined, nextId: 0 };
      let pending = Buffer.alloc(0);
      socket.on('error', () => {});
      socket.on('data', (chunk) => {
        pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
        for (let frame = frameOf(pending); frame; frame = frameOf(pending)) {
          const [at, length] = frame;
          onPacket(gateway, pending[0], pending.subarray(at, at + length));
          pending = pending.subarray(at + length);
        }
        checkStopped();
      });
    },
  );
  server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => process.send({ type: 'listening', port: server.address().port }));
}

process.on('message', (message) => {
  if (message === 'start') {
    startedAt = performance.now();
    tick(0);
  } else if (message === 'stop') {
    clearTimeout(timer);
    stoppedAt = performance.now();
    stopping = true;
    checkStopped();
  } else if (message === 'close') process.exit(0);
  else {
    config = message;
    listen();
  }
});
