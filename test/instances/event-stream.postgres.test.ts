import { randomUUID } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClients, atInstance, provisionGateway, type TestGateway } from '../helpers/mqtt.js';
import { CUSTOMER, secondInstance, startTestServer, type TestServer } from '../helpers/server.js';
import { openSse, type SseConnection, type StreamEvent } from '../helpers/sse.js';
import { selectColumn } from '../helpers/store-rows.js';
import { requirePostgresProject } from '../helpers/test-store.js';

// The live event stream on a scale-out deployment (DESIGN.md "Scale-out"): two instances on one
// PostgreSQL database, each with its own MQTT listener, hub and LISTEN connection. An event
// ingested by one reaches the streams of the other over NOTIFY, in the one commit order both read.
// (PostgreSQL only: a .postgres.test.ts file, test/README.md.)

requirePostgresProject(import.meta.url);

const STREAM = `/${CUSTOMER}/events/stream`;
let a: TestServer;
let b: TestServer;
let gateway: TestGateway;
/** A second gateway: one gateway connected to B closes its connection to A (DESIGN.md "Scale-out"). */
let second: TestGateway;
const clients = new GatewayClients();
const open: SseConnection[] = [];

beforeAll(async () => {
  a = await startTestServer({ liveEvents: { heartbeatMs: 1000 } });
  b = await secondInstance(a, { liveEvents: { heartbeatMs: 1000 } });
  gateway = await provisionGateway(a);
  second = await provisionGateway(a);
});
afterEach(() => {
  for (const connection of open.splice(0)) connection.close();
});
afterAll(async () => {
  await clients.endAll();
  await b?.close();
  await a?.close();
});


async function stream(t: TestServer, lastEventId?: string): Promise<SseConnection> {
  const connection = await openSse(t.url, STREAM, { token: a.adminToken, lastEventId });
  open.push(connection);
  await connection.until((c) => c.items.length > 0, 'the first comment');
  return connection;
}

async function publish(client: MqttClient, count: number, device = gateway): Promise<string[]> {
  const events = Array.from({ length: count }, () => ({ id: randomUUID(), type: 'scan', scan_code: `code-${randomUUID().slice(0, 8)}` }));
  await client.publishAsync(device.topic, JSON.stringify(events), { qos: 1 });
  return events.map((event) => event.id);
}

const idOf = (event: StreamEvent) => (JSON.parse(event.data) as { id: string }).id;
const commitOrder = async () => (await selectColumn(a, 'SELECT id FROM events WHERE customer_id = ? AND tx IS NOT NULL ORDER BY tx, seq', CUSTOMER)) as string[];

describe('the live event stream on two instances', () => {
  it('an event published to A reaches a stream served by B; both instances stream one commit order', async () => {
    const fromB = await stream(b);
    const fromA = await stream(a);
    const onA = await clients.connect(atInstance(a, gateway));
    const onB = await clients.connect(atInstance(b, second));
    const published: string[] = [];
    published.push(...(await publish(onA, 3)));
    expect((await fromB.eventCount(3)).map(idOf)).toEqual(published);
    // Both instances ingest at once: their transactions commit in an order neither chooses.
    for (let round = 0; round < 10; round++) published.push(...(await Promise.all([publish(onA, 2), publish(onB, 2, second)])).flat());
    const order = await commitOrder();
    expect(order.filter((id) => published.includes(id))).toHaveLength(43);
    expect((await fromB.eventCount(43)).map(idOf)).toEqual(order.filter((id) => published.includes(id)));
    expect((await fromA.eventCount(43)).map(idOf)).toEqual(order.filter((id) => published.includes(id)));
    // A cursor of A's stream resumes on B.
    const resumed = await stream(b, fromA.events()[39]!.id);
    expect((await resumed.eventCount(3)).map(idOf)).toEqual(order.filter((id) => published.includes(id)).slice(40));
  });

  it('holds back an event while an older transaction is open, and sends it once that ends, without another signal', async () => {
    const s = await stream(b);
    const onA = await clients.connect(atInstance(a, second));
    const blocker = new pg.Client({ connectionString: (a.server.ctx.store.locator as { url: string }).url });
    await blocker.connect();
    try {
      // A write transaction older than the event's: until it ends, rows of later transactions may
      // still be joined by its own, so no reader may pass them.
      await blocker.query('BEGIN');
      await blocker.query('SELECT pg_current_xact_id()');
      const [held] = await publish(onA, 1, second);
      const [heartbeats] = [s.comments().length];
      await s.until((c) => c.comments().length >= heartbeats + 1, 'a heartbeat while the event is held back');
      expect(s.events()).toEqual([]);
      await blocker.query('COMMIT');
      expect((await s.eventCount(1)).map(idOf)).toEqual([held]);
    } finally {
      await blocker.end();
    }
  });
});
