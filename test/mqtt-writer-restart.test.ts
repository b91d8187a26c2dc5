import type { MqttClient } from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { crashThreadForTest, type TestCrash } from '../src/mqtt/supervised-thread.js';
import { call } from './helpers/http.js';
import { connectGateway, provisionGateway, type TestGateway } from './helpers/mqtt.js';
import { collectedLogs, startTestServer, type TestServer } from './helpers/server.js';

// The SQLite threads of MQTT ingest die for real (an uncaught error thrown by the thread entry on
// a test-only message, crashThreadForTest): the service replaces them, acknowledges nothing that
// the dead thread had, says so on /healthz meanwhile, and carries on.

let t: TestServer;
let logs: { msg: string; [field: string]: unknown }[];
const clients: MqttClient[] = [];
beforeEach(async () => {
  const collected = collectedLogs('info');
  logs = collected.lines;
  t = await startTestServer({ logger: collected.logger });
  await t.server.broker.threads.writer.reached('running');
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.endAsync(true)));
  await t.close();
});

/** A gateway that reconnects at once and then resends what was not acknowledged, as devices do. */
async function connect(gateway: TestGateway): Promise<MqttClient> {
  const client = await connectGateway(gateway, { reconnectPeriod: 20 });
  clients.push(client);
  return client;
}

const ID = ['7a0c4e1b-2d3f-4a5b-8c6d-9e0f1a2b3c01', '7a0c4e1b-2d3f-4a5b-8c6d-9e0f1a2b3c02', '7a0c4e1b-2d3f-4a5b-8c6d-9e0f1a2b3c03'];
const scan = (id: string) => JSON.stringify({ id, type: 'scan', scan_code: 'A-1', created: 1_700_000_000_000 });
const storedIds = () => (t.server.ctx.db.prepare('SELECT id FROM events ORDER BY seq').all() as { id: string }[]).map((row) => row.id);
const health = async () => {
  const answer = await call(t.url, 'GET', '/healthz');
  return { status: answer.status, body: answer.body };
};
const HEALTHY = { status: 200, body: { status: 'ok', http: 'ok', mqtt: 'ok', database: 'ok' } };
const logged = (msg: string) => logs.filter((line) => line.msg === msg);

describe('the ingest writer thread dies', () => {
  const cases: { moment: TestCrash; storedBeforeRestart: string[]; duplicates: number }[] = [
    // Dies before committing: nothing stored until the gateway redelivers.
    { moment: 'before-commit', storedBeforeRestart: [], duplicates: 0 },
    // Dies after committing but before answering: stored, yet not acknowledged; the redelivery is a duplicate.
    { moment: 'after-commit', storedBeforeRestart: [ID[0]!], duplicates: 1 },
  ];

  it.each(cases)('$moment: no PUBACK, /healthz 503 until a new thread runs, the redelivery stored once', async ({ moment, storedBeforeRestart, duplicates }) => {
    const gateway = await provisionGateway(t);
    const client = await connect(gateway);
    const writer = t.server.broker.threads.writer;
    const release = crashThreadForTest(writer, moment, { holdRestart: true });

    let acknowledged = false;
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    const delivered = client.publishAsync(gateway.topic, scan(ID[0]!), { qos: 1 }).then(() => (acknowledged = true));
    await writer.reached('restarting');
    // The broker closed the connection instead of acknowledging: the gateway will redeliver.
    await closed;
    expect(acknowledged).toBe(false);
    expect(storedIds()).toEqual(storedBeforeRestart);
    expect(await health()).toEqual({
      status: 503,
      body: { title: 'Service Unavailable', details: `Not ready yet: mqtt (ingest writer restarting after: test crash ${moment.replace('-', ' ')}).` },
    });

    release();
    await writer.reached('running');
    // The gateway reconnected and resent the message; the new writer thread stored it (once).
    await delivered;
    expect(await health()).toEqual(HEALTHY);
    await client.publishAsync(gateway.topic, scan(ID[1]!), { qos: 1 });
    expect(storedIds()).toEqual([ID[0], ID[1]]);
    // `events` counts what the writer reported stored: the dead thread never reported its commit.
    expect(t.server.broker.ingest).toMatchObject({ messages: 3, events: 2 - duplicates, duplicates, failed: 1, invalid: 0 });
    expect(writer.starts).toBe(2);

    const [crash] = logged('ingest writer thread crashed, restarting');
    expect(crash).toMatchObject({ level: 50, component: 'mqtt', thread: 'ingest writer', restart_in_ms: 100, err: { message: `test crash ${moment.replace('-', ' ')}` } });
    expect(logged('ingest writer thread restarted')).toEqual([
      expect.objectContaining({ level: 30, thread: 'ingest writer', starts: 2, cause: `test crash ${moment.replace('-', ' ')}` }),
    ]);
    expect(logged('messages not stored and not acknowledged')).toEqual([
      expect.objectContaining({ messages: 1, gateway_id: gateway.id, reason: `writer thread failed: test crash ${moment.replace('-', ' ')}` }),
    ]);
  }, 20_000);

  it('while idle: nothing fails; a message sent meanwhile waits for the new thread, then is acknowledged', async () => {
    const gateway = await provisionGateway(t);
    const client = await connect(gateway);
    let closes = 0;
    client.on('close', () => closes++);
    const writer = t.server.broker.threads.writer;
    const release = crashThreadForTest(writer, 'now', { holdRestart: true });
    await writer.reached('restarting');
    expect(await health()).toEqual({
      status: 503,
      body: { title: 'Service Unavailable', details: 'Not ready yet: mqtt (ingest writer restarting after: test crash of the writer thread).' },
    });

    // The writer's state when the PUBACK arrives: it must not come before a thread stored the message.
    const delivered = client.publishAsync(gateway.topic, scan(ID[0]!), { qos: 1 }).then(() => writer.state);
    await messagesSubmitted(1);
    release();
    expect(await delivered).toBe('running');
    expect(storedIds()).toEqual([ID[0]]);
    expect(t.server.broker.ingest).toMatchObject({ messages: 1, events: 1, failed: 0 });
    expect(closes).toBe(0);
    expect(await health()).toEqual(HEALTHY);
  });
});

/** Resolves once the broker has handed `count` messages to ingest (no event says so: checks each turn, for at most 5 s). */
async function messagesSubmitted(count: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (t.server.broker.ingest.messages < count) {
    if (Date.now() > deadline) throw new Error(`the broker received ${t.server.broker.ingest.messages} messages, not ${count}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('the checkpointer thread dies', () => {
  it('is replaced; it is not on the PUBACK path, so MQTT stays healthy and ingest goes on meanwhile', async () => {
    const gateway = await provisionGateway(t);
    const client = await connect(gateway);
    const checkpointer = t.server.broker.threads.checkpointer;
    await checkpointer.reached('running');
    const release = crashThreadForTest(checkpointer, 'now', { holdRestart: true });
    await checkpointer.reached('restarting');
    expect(await health()).toEqual(HEALTHY);
    await client.publishAsync(gateway.topic, scan(ID[0]!), { qos: 1 });
    release();
    await checkpointer.reached('running');
    expect(storedIds()).toEqual([ID[0]]);
    expect(checkpointer.starts).toBe(2);
    expect(logged('checkpointer thread crashed, restarting')).toEqual([
      expect.objectContaining({ level: 50, thread: 'checkpointer', restart_in_ms: 100, err: expect.objectContaining({ message: 'test crash of the checkpointer thread' }) }),
    ]);
    expect(logged('checkpointer thread restarted')).toEqual([expect.objectContaining({ starts: 2, cause: 'test crash of the checkpointer thread' })]);
  });
});

describe('close()', () => {
  it('during a restart: finishes, starts no thread, and acknowledges nothing it could not store', async () => {
    const gateway = await provisionGateway(t);
    const client = await connect(gateway);
    const { writer, checkpointer } = t.server.broker.threads;
    const release = crashThreadForTest(writer, 'now', { holdRestart: true });
    await writer.reached('restarting');
    let acknowledged = false;
    void client.publishAsync(gateway.topic, scan(ID[0]!), { qos: 1 }).then(() => (acknowledged = true), () => undefined);
    await messagesSubmitted(1);

    await t.server.close();
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect({ writer: writer.state, writerStarts: writer.starts, checkpointer: checkpointer.state }).toEqual({ writer: 'closed', writerStarts: 1, checkpointer: 'closed' });
    expect(acknowledged).toBe(false);
    expect(t.server.broker.ingest).toMatchObject({ messages: 1, events: 0, failed: 1 });
    expect(logged('messages not stored and not acknowledged')).toEqual([
      expect.objectContaining({ messages: 1, reason: 'shutting down while the writer thread restarts' }),
    ]);
    expect(logged('ingest closed')).toHaveLength(1);
  });

  it('after a restart: the new threads finish and close() restarts nothing', async () => {
    const gateway = await provisionGateway(t);
    const client = await connect(gateway);
    const { writer, checkpointer } = t.server.broker.threads;
    crashThreadForTest(writer, 'now');
    await writer.reached('restarting');
    await writer.reached('running');
    await client.publishAsync(gateway.topic, scan(ID[0]!), { qos: 1 });

    await t.server.close();
    expect({ writer: writer.state, writerStarts: writer.starts, checkpointer: checkpointer.state, checkpointerStarts: checkpointer.starts }).toEqual({
      writer: 'closed',
      writerStarts: 2,
      checkpointer: 'closed',
      checkpointerStarts: 1,
    });
    expect(logs.filter((line) => String(line.msg).includes('crashed')).map((line) => line.msg)).toEqual(['ingest writer thread crashed, restarting']);
    expect(t.server.broker.ingest).toMatchObject({ messages: 1, events: 1, failed: 0 });
  });
});
