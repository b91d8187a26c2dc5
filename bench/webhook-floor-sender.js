// The `floor` configuration of bench/webhooks.bench.js (bench/README.md "webhooks"): a bare sender,
// no scanhub code, that POSTs to the receivers what serve would send for three webhooks, so that
// ingest alone beside it shows the best ratio any serve could reach with those receivers on this
// machine. Per receiver, one message at a time as serve sends them: batches of up to 500 events
// (the real events' JSON, given once), `{ type, timestamp, data }` as docs/webhooks.md
// "Messages", the bytes of a batch built once for the receivers at the same position, signed with
// HMAC-SHA256 per receiver as Standard Webhooks, over keep-alive HTTP/1.1 from Node's http client.
// IPC in: `{ urls, events }` once (the receivers, the events' JSON texts), then `{ acked }` (the
// events acknowledged so far: each receiver is kept up to them). Out: `{ idle: true }` once every
// receiver has got `acked` events, after an `{ acked, last: true }`.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';

const PER_MESSAGE = 500;
const agent = new Agent({ keepAlive: true });
let templates = [];
let acked = 0;
let last = false;
const senders = [];
// The bytes of a batch per `start:count`, until every receiver has taken it.
const shared = new Map();

function batchData(start, count) {
  const key = `${start}:${count}`;
  let entry = shared.get(key);
  if (!entry) {
    const items = new Array(count);
    for (let i = 0; i < count; i++) items[i] = templates[(start + i) % templates.length];
    entry = { data: Buffer.from(`[${items.join(',')}]`), takers: 0 };
    shared.set(key, entry);
  }
  if (++entry.takers === senders.length) shared.delete(key);
  return entry.data;
}

function post(sender, body, id) {
  const timestamp = Math.floor(Date.now() / 1000);
  const mac = createHmac('sha256', sender.key).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return new Promise((resolve, reject) => {
    const req = request(sender.url, {
      method: 'POST',
      agent,
      headers: {
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': `v1,${mac}`,
        'content-type': 'application/json',
        'content-length': String(body.length),
        'user-agent': 'scanhub-webhooks',
      },
    });
    req.on('error', reject);
    req.on('response', (response) => {
      response.on('data', () => {});
      response.on('end', () => (response.statusCode >= 200 && response.statusCode < 300 ? resolve() : reject(new Error(`answered ${response.statusCode}`))));
    });
    req.end(body);
  });
}

async function run(sender) {
  sender.running = true;
  while (sender.sent < acked) {
    const count = Math.min(PER_MESSAGE, acked - sender.sent);
    const data = batchData(sender.sent, count);
    const head = Buffer.from(`{"type":"event.batch","timestamp":${JSON.stringify(new Date().toISOString())},"data":`);
    await post(sender, Buffer.concat([head, data, BODY_END]), randomUUID());
    sender.sent += count;
  }
  sender.running = false;
  if (last && senders.every((s) => s.sent >= acked)) process.send({ idle: true });
}

const BODY_END = Buffer.from('}');

process.on('message', (message) => {
  if (message.urls) {
    templates = message.events;
    for (const url of message.urls) senders.push({ url, key: randomBytes(32), sent: 0, running: false });
    return;
  }
  if (message.acked !== undefined) {
    acked = Math.max(acked, message.acked);
    last ||= message.last === true;
    for (const sender of senders) if (!sender.running) run(sender).catch((error) => (console.error(`floor sender: ${error.message}`), process.exit(1)));
    if (last && senders.every((s) => s.sent >= acked && !s.running)) process.send({ idle: true });
  }
  if (message === 'close') process.exit(0);
});
