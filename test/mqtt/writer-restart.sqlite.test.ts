import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { selectRows } from '../helpers/store-rows.js';
import { crashThreadForTest, type TestCrash } from '../../src/threads/supervised-thread.js';
import { call } from '../helpers/http.js';
import { messagesSubmitted, provisionGateway, type TestGateway, GatewayClients } from '../helpers/mqtt.js';
import { CUSTOMER, collectedLogs, startTestServer, type TestServer } from '../helpers/server.js';

/** The SQLite store's WAL checkpointer, one of the threads it runs beside the ingest writer. */
const checkpointerOf = (server: TestServer) => server.server.broker.threads.maintenance.find((thread) => thread.name === 'checkpointer')!;

// The SQLite threads of MQTT ingest die for real (an uncaught error thrown by the thread entry on
// a test-only message, crashThreadForTest): the service replaces them, acknowledges nothing that
// the dead thread had, says so on /healthz meanwhile, and carries on.

let t: TestServer;
let logs: { msg: string; [field: string]: unknown }[];
const clients = new GatewayClients({ reconnectPeriod: 20 });
beforeEach(async () => {
  const collected = collectedLogs('info');
  logs = collected.lines;
  t = await startTestServer({ logger: collected.logger });
  // /healthz names both threads' states: each test starts once both run.
  await Promise.all([t.server.broker.threads.writer.reached('running'), checkpointerOf(t).reached('running')]);
});
afterEach(async () => {
  await clients.endAll();
  await t.close();
});

/** A gateway that reconnects at once and then resends what was not acknowledged, as devices do. */
const connect = (gateway: TestGateway) => clients.connect(gateway);

const ID = ['7a0c4e1b-2d3f-4a5b-8c6d-9e0f1a2b3c01', '7a0c4e1b-2d3f-4a5b-8c6d-9e0f1a2b3c02', '7a0c4e1b-2d3f-4a5b-8c6d-9e0f1a2b3c03'];
const scan = (id: string) => JSON.stringify({ id, type: 'scan', scan_code: 'A-1', created: 1_700_000_000_000 });
const storedIds = async () => ((await selectRows(t.server, 'SELECT id FROM events ORDER BY id')) as { id: string }[]).map((row) => row.id);
const health = async () => {
  const answer = await call(t.url, 'GET', '/healthz');
  return { status: answer.status, body: answer.body };
};
/** /healthz when all is ready, with the threads as given (others: running, started once, never died). */
const healthy = (threads: Record<string, unknown> = {}) => ({
  status: 200,
  body: {
    status: 'ok',
    http: 'ok',
    mqtt: 'ok',
    database: 'ok',
    signals: 'ok',
    threads: { 'ingest writer': { state: 'running', starts: 1, last_cause: null }, checkpointer: { state: 'running', starts: 1, last_cause: null }, ...threads },
  },
});
const logged = (msg: string) => logs.filter((line) => line.msg === msg);

/** The dead letters, as an operator would read them (docs/gateways-mqtt.md "Quarantine"). */
const deadLetters = async () => {
  const { deadLetters: store } = t.server.ctx.store;
  return Promise.all(
    (await store.list()).map(async ({ seq, gateway_id, customer_id, reason }) => ({ gateway_id, customer_id, reason, payload: Buffer.from((await store.payload(seq))!).toString() })),
  );
};
/** /healthz's view of one thread. */
const thread = (state: string, starts: number, lastCause: string | null) => ({ state, starts, last_cause: lastCause });

describe('the ingest writer thread dies', () => {
  const cases: { moment: Extract<TestCrash, string>; storedBeforeRestart: string[] }[] = [
    // Dies before committing: the message is kept as a dead letter only.
    { moment: 'before-commit', storedBeforeRestart: [] },
    // Dies after committing but before answering: stored, and kept as a dead letter all the same.
    { moment: 'after-commit', storedBeforeRestart: [ID[0]!] },
  ];

  it.each(cases)('$moment with one message in hand: /healthz 503 until a new thread runs, then the message is quarantined and acknowledged', async ({ moment, storedBeforeRestart }) => {
    const gateway = await provisionGateway(t);
    const client = await connect(gateway);
    let closes = 0;
    client.on('close', () => closes++);
    const writer = t.server.broker.threads.writer;
    const release = crashThreadForTest(writer, moment, { holdRestart: true });
    const cause = `test crash ${moment.replace('-', ' ')}`;

    let acknowledged = false;
    const delivered = client.publishAsync(gateway.topic, scan(ID[0]!), { qos: 1 }).then(() => (acknowledged = true));
    await writer.reached('restarting');
    expect(acknowledged).toBe(false);
    expect((await storedIds())).toEqual(storedBeforeRestart);
    expect(await health()).toEqual({
      status: 503,
      body: {
        title: 'Service Unavailable',
        details: `Not ready yet: mqtt (ingest writer restarting after: ${cause}). Threads: ingest writer restarting (1 start, last cause: ${cause}), checkpointer running (1 start).`,
      },
    });

    release();
    await writer.reached('running');
    // The new thread kept the message as a dead letter; then the PUBACK went out, on the same connection.
    await delivered;
    expect(await deadLetters()).toEqual([{ gateway_id: gateway.id, customer_id: CUSTOMER, reason: `crashed the ingest writer thread: ${cause}`, payload: scan(ID[0]!) }]);
    expect((await storedIds())).toEqual(storedBeforeRestart);
    expect(closes).toBe(0);
    expect(await health()).toEqual(healthy({ 'ingest writer': thread('running', 2, cause) }));
    await client.publishAsync(gateway.topic, scan(ID[1]!), { qos: 1 });
    expect((await storedIds())).toEqual([...storedBeforeRestart, ID[1]]);
    expect(t.server.broker.ingest).toMatchObject({ messages: 2, events: 1, quarantined: 1, failed: 0, invalid: 0 });
    expect(writer.starts).toBe(2);

    const [crash] = logged('ingest writer thread crashed, restarting');
    expect(crash).toMatchObject({ level: 50, component: 'mqtt', thread: 'ingest writer', restart_in_ms: 100, err: { message: cause } });
    expect(logged('ingest writer thread restarted')).toEqual([expect.objectContaining({ level: 30, thread: 'ingest writer', starts: 2, cause })]);
    expect(logged('message quarantined: kept as a dead letter and acknowledged')).toEqual([
      expect.objectContaining({ level: 50, gateway_id: gateway.id, dead_letter: 1, reason: `crashed the ingest writer thread: ${cause}` }),
    ]);
    expect(logged('messages not stored and not acknowledged')).toEqual([]);
  }, 20_000);

  it('while idle: nothing fails; a message sent meanwhile waits for the new thread, then is acknowledged', async () => {
    const gateway = await provisionGateway(t);
    const client = await connect(gateway);
    let closes = 0;
    client.on('close', () => closes++);
    const writer = t.server.broker.threads.writer;
    const release = crashThreadForTest(writer, 'now', { holdRestart: true });
    await writer.reached('restarting');
    const cause = 'test crash of the writer thread';
    expect(await health()).toEqual({
      status: 503,
      body: {
        title: 'Service Unavailable',
        details: `Not ready yet: mqtt (ingest writer restarting after: ${cause}). Threads: ingest writer restarting (1 start, last cause: ${cause}), checkpointer running (1 start).`,
      },
    });

    // The writer's state when the PUBACK arrives: it must not come before a thread stored the message.
    const delivered = client.publishAsync(gateway.topic, scan(ID[0]!), { qos: 1 }).then(() => writer.state);
    await messagesSubmitted(t, 1);
    release();
    expect(await delivered).toBe('running');
    expect((await storedIds())).toEqual([ID[0]]);
    expect(t.server.broker.ingest).toMatchObject({ messages: 1, events: 1, failed: 0, quarantined: 0 });
    expect(closes).toBe(0);
    expect(await health()).toEqual(healthy({ 'ingest writer': thread('running', 2, cause) }));
  });
});

describe('the checkpointer thread dies', () => {
  it('is replaced and shown on /healthz; it is not on the PUBACK path, so /healthz stays 200 and ingest goes on meanwhile', async () => {
    const gateway = await provisionGateway(t);
    const client = await connect(gateway);
    const checkpointer = checkpointerOf(t);
    await checkpointer.reached('running');
    const release = crashThreadForTest(checkpointer, 'now', { holdRestart: true });
    await checkpointer.reached('restarting');
    const cause = 'test crash of the checkpointer thread';
    // Shown, but not a reason for 503: the checkpointer is not on the PUBACK path.
    expect(await health()).toEqual(healthy({ checkpointer: thread('restarting', 1, cause) }));
    await client.publishAsync(gateway.topic, scan(ID[0]!), { qos: 1 });
    release();
    await checkpointer.reached('running');
    expect(await health()).toEqual(healthy({ checkpointer: thread('running', 2, cause) }));
    expect((await storedIds())).toEqual([ID[0]]);
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
    const { writer } = t.server.broker.threads;
    const checkpointer = checkpointerOf(t);
    const release = crashThreadForTest(writer, 'now', { holdRestart: true });
    await writer.reached('restarting');
    let acknowledged = false;
    void client.publishAsync(gateway.topic, scan(ID[0]!), { qos: 1 }).then(() => (acknowledged = true), () => undefined);
    await messagesSubmitted(t, 1);

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
    const { writer } = t.server.broker.threads;
    const checkpointer = checkpointerOf(t);
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
