import type { MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dbOf } from '../helpers/sqlite.js';
import { crashThreadForTest } from '../../src/threads/supervised-thread.js';
import { call } from '../helpers/http.js';
import { connectGateway, messagesSubmitted, provisionGateway, type TestGateway } from '../helpers/mqtt.js';
import { CUSTOMER, collectedLogs, startTestServer, type TestServer } from '../helpers/server.js';

// A gateway sends what no device should, over mutual TLS to a real server: each message is
// acknowledged, stores nothing, is counted and logged once, and the writer thread never dies;
// another gateway publishing meanwhile gets every PUBACK. Then a message that does kill the
// writer thread (a test-only trigger) is quarantined, and the innocent messages of its batch stored.

type Logs = { msg: string; [field: string]: unknown }[];
const clients: MqttClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.endAsync(true)));
});

/** Connects the gateway, counting the times its connection closes. */
async function connect(gateway: TestGateway): Promise<{ client: MqttClient; closes: () => number }> {
  const client = await connectGateway(gateway);
  clients.push(client);
  let closes = 0;
  client.on('close', () => closes++);
  return { client, closes: () => closes };
}

let counter = 0;
/** A valid scan with a fresh id. */
const scan = () => JSON.stringify({ id: `3f2a0c4e-1b2d-4e5f-8a6b-${String(++counter).padStart(12, '0')}`, type: 'scan', scan_code: 'A-1' });

/**
 * A gateway publishing QoS 1 one message after another until stopped. `acknowledged(n)` resolves
 * once n PUBACKs arrived; `stop()` waits for the last one and says how many were sent and stored.
 */
function publishMeanwhile(client: MqttClient, topic: string) {
  let running = true;
  let acknowledged = 0;
  const waiters: { count: number; resolve: () => void }[] = [];
  const loop = (async () => {
    while (running) {
      await client.publishAsync(topic, scan(), { qos: 1 });
      acknowledged++;
      for (const waiter of waiters.filter((w) => w.count <= acknowledged)) waiters.splice(waiters.indexOf(waiter), 1), waiter.resolve();
    }
  })();
  return {
    acknowledged: (count: number) => new Promise<void>((resolve) => (count <= acknowledged ? resolve() : waiters.push({ count, resolve }))),
    count: () => acknowledged,
    async stop() {
      running = false;
      await loop;
      return acknowledged;
    },
  };
}

const eventsOf = (t: TestServer, gatewayId: string) =>
  dbOf(t.server).prepare('SELECT count(*) FROM events WHERE gateway_id = ?').pluck().get(gatewayId) as number;

describe('poison from a gateway', () => {
  let t: TestServer;
  let logs: Logs;
  const DAY = 86_400_000;
  beforeAll(async () => {
    const collected = collectedLogs('info');
    logs = collected.lines;
    t = await startTestServer({ logger: collected.logger });
    await t.server.broker.threads.writer.reached('running');
  });
  afterAll(async () => {
    await t.close();
  });

  const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
  const poisons: [string, () => string | Buffer, RegExp][] = [
    ['a nesting bomb 100,000 deep as the message', () => deep(100_000), /^payload nests arrays or objects deeper than 64 levels$/],
    ['a nesting bomb 100,000 deep as the value of type', () => `{"type":${deep(100_000)}}`, /^payload nests arrays or objects deeper than 64 levels$/],
    ['10,000 events in one message', () => JSON.stringify(Array.from({ length: 10_000 }, () => ({ type: 'scan' }))), /^a message holds at most 1000 events, got an array of 10000$/],
    ['a scan code of 200,000 characters', () => JSON.stringify({ type: 'scan', scan_code: 'x'.repeat(200_000) }), /^"scan_code" must be at most 8192 characters, got 200000$/],
    ['a device id of 100,000 characters', () => JSON.stringify({ type: 'scan', device_id: 'd'.repeat(100_000) }), /^"device_id" must be at most 256 characters, got 100000$/],
    ['created 2^53-1 (never listable)', () => JSON.stringify({ type: 'scan', created: 2 ** 53 - 1 }), /^"created" must be .* got 9007199254740991$/],
    ['created 0 (before 2000)', () => JSON.stringify({ type: 'scan', created: 0 }), /^"created" must be milliseconds since the epoch from 2000-01-01T00:00:00.000Z to .*, got 0$/],
    ['created two days ahead', () => JSON.stringify({ type: 'scan', created: Date.now() + 2 * DAY }), /^"created" must be .*, got \d+$/],
    ['text that is not JSON', () => '{"type": "scan",', /^payload is not JSON: /],
    ['bytes that are not UTF-8 in a string', () => Buffer.concat([Buffer.from('{"type":"scan","scan_code":"'), Buffer.from([0xfe, 0xff]), Buffer.from('"}')]), /^payload is not UTF-8$/],
  ];

  it.each(poisons)('%s: acknowledged, nothing stored, counted, logged once; the writer lives, another gateway gets every PUBACK', async (_name, poison, reason) => {
    const [sender, bystander] = [await provisionGateway(t), await provisionGateway(t)];
    const [bad, good] = [await connect(sender), await connect(bystander)];
    const invalidBefore = t.server.broker.ingest.invalid;
    const meanwhile = publishMeanwhile(good.client, bystander.topic);
    await meanwhile.acknowledged(1);

    // Three times: a device that got no PUBACK would resend; it gets one each time.
    for (let i = 0; i < 3; i++) await bad.client.publishAsync(sender.topic, poison(), { qos: 1 });
    // The bystander is still acknowledged after the poison was.
    await meanwhile.acknowledged(meanwhile.count() + 1);
    const acknowledged = await meanwhile.stop();

    expect(eventsOf(t, sender.id)).toBe(0);
    expect(eventsOf(t, bystander.id)).toBe(acknowledged);
    expect(t.server.broker.ingest.invalid - invalidBefore).toBe(3);
    expect(t.server.broker.threads.writer.starts).toBe(1);
    expect([bad.closes(), good.closes()]).toEqual([0, 0]);
    const lines = logs.filter((line) => line.msg === 'invalid message acknowledged and dropped' && line.gateway_id === sender.id);
    expect(lines).toEqual([expect.objectContaining({ level: 40, reason: expect.stringMatching(reason), suppressed: 0 })]);
    expect((await call(t.url, 'GET', '/healthz')).status).toBe(200);
  });
});

describe('a message that kills the writer thread', () => {
  it('is quarantined after its batch crashed: the innocent messages of the batch are stored, it is kept as a dead letter, and a copy never reaches the thread', async () => {
    const collected = collectedLogs('info');
    const t = await startTestServer({ logger: collected.logger });
    try {
      const logged = (msg: string) => collected.lines.filter((line) => line.msg === msg);
      const writer = t.server.broker.threads.writer;
      await writer.reached('running');
      const [innocent, culprit] = [await provisionGateway(t), await provisionGateway(t)];
      const [good, bad] = [await connect(innocent), await connect(culprit)];
      const poison = JSON.stringify({ type: 'scan', scan_code: 'KILL-THE-WRITER' });
      // Every writer thread, replacements included, dies on a batch holding this text.
      crashThreadForTest(writer, { payloadContains: 'KILL-THE-WRITER' });

      // While no thread runs, a first message waits in the backend; the next two queue behind it,
      // so that they form the next batch together.
      const release = crashThreadForTest(writer, 'now', { holdRestart: true });
      await writer.reached('restarting');
      const [first, second] = [scan(), scan()];
      const acknowledged = [good.client.publishAsync(innocent.topic, first, { qos: 1 })];
      await messagesSubmitted(t, 1);
      acknowledged.push(good.client.publishAsync(innocent.topic, second, { qos: 1 }), bad.client.publishAsync(culprit.topic, poison, { qos: 1 }));
      await messagesSubmitted(t, 3);
      release();
      await Promise.all(acknowledged);

      const stored = dbOf(t.server).prepare('SELECT id FROM events ORDER BY seq').pluck().all();
      expect(stored).toEqual([JSON.parse(first).id, JSON.parse(second).id]);
      const deadLetters = () => dbOf(t.server).prepare('SELECT gateway_id, customer_id, reason, CAST(payload AS TEXT) AS payload FROM dead_letters').all();
      expect(deadLetters()).toEqual([{ gateway_id: culprit.id, customer_id: CUSTOMER, reason: 'crashed the ingest writer thread: test crash on a marked payload', payload: poison }]);
      // Started, died idle ('now'), died with the batch of two, died with the poison alone.
      expect(writer.starts).toBe(4);
      expect(t.server.broker.ingest).toMatchObject({ messages: 3, events: 2, quarantined: 1, retriedAlone: 2, failed: 0, invalid: 0 });
      expect(logged('ingest writer thread died with a batch: committing its messages one by one')).toEqual([
        expect.objectContaining({ level: 40, messages: 2, reason: 'test crash on a marked payload' }),
      ]);
      expect(logged('message quarantined: kept as a dead letter and acknowledged')).toEqual([
        expect.objectContaining({ level: 50, gateway_id: culprit.id, dead_letter: 1, reason: 'crashed the ingest writer thread: test crash on a marked payload' }),
      ]);

      // The device sends it again: acknowledged and dropped without reaching the thread.
      await writer.reached('running');
      await bad.client.publishAsync(culprit.topic, poison, { qos: 1 });
      await good.client.publishAsync(innocent.topic, scan(), { qos: 1 });
      expect(writer.starts).toBe(4);
      expect(deadLetters()).toHaveLength(1);
      expect(t.server.broker.ingest).toMatchObject({ messages: 5, events: 3, quarantined: 2 });
      expect(logged('quarantined message acknowledged and dropped')).toEqual([
        expect.objectContaining({ level: 40, gateway_id: culprit.id, reason: 'a copy of a quarantined message', suppressed: 0 }),
      ]);
      expect([good.closes(), bad.closes()]).toEqual([0, 0]);
      const health = await call(t.url, 'GET', '/healthz');
      expect(health.body).toMatchObject({ status: 'ok', threads: { 'ingest writer': { state: 'running', starts: 4, last_cause: 'test crash on a marked payload' } } });
    } finally {
      await Promise.all(clients.splice(0).map((client) => client.endAsync(true)));
      await t.close();
    }
  }, 30_000);
});
