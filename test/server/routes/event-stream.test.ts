import { randomUUID } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { comparePositions, decodeCursor, encodeCursor } from '../../../src/domain/stream-cursor.js';
import { startServer } from '../../../src/serve/start.js';
import { OTHER_CUSTOMER_REFUSED, otherCustomerToken } from '../../helpers/gateways.js';
import { call } from '../../helpers/http.js';
import { NO_HEADER } from '../../helpers/scenarios.js';
import { GatewayClients, provisionGateway, type TestGateway } from '../../helpers/mqtt.js';
import { CUSTOMER, startTestServer, testServeOptions, type TestServer } from '../../helpers/server.js';
import { openSse, type SseConnection, type StreamEvent } from '../../helpers/sse.js';
import { selectColumn, selectRows } from '../../helpers/store-rows.js';
import { TEST_STORE } from '../../helpers/test-store.js';

// GET /{customer_id}/events/stream (DESIGN.md "Operations on one box", docs/events.md "Live
// events"): real gateways publish over MQTT with TLS, a real HTTP client reads the stream.

const LIVE = { heartbeatMs: 200, bufferBytes: 64 * 1024, lingerMs: 20_000 };
const STREAM = `/${CUSTOMER}/events/stream`;

let t: TestServer;
let g1: TestGateway;
let g2: TestGateway;
let c1: MqttClient;
let c2: MqttClient;
const clients = new GatewayClients();
const open: SseConnection[] = [];

beforeAll(async () => {
  t = await startTestServer({ liveEvents: LIVE });
  g1 = await provisionGateway(t, { name: 'dock-1' });
  g2 = await provisionGateway(t, { name: 'dock-2' });
  c1 = await clients.connect(g1);
  c2 = await clients.connect(g2);
});
afterEach(() => {
  for (const connection of open.splice(0)) connection.close();
});
afterAll(async () => {
  await clients.endAll();
  await t?.close();
});

/** Opens a stream that the test closes in afterEach. */
async function stream(base: string, path: string, options: Parameters<typeof openSse>[2]): Promise<SseConnection> {
  const connection = await openSse(base, path, options);
  open.push(connection);
  return connection;
}

/** Publishes `count` scan events in one QoS 1 message (resolved once stored); their ids. */
async function publish(client: MqttClient, gateway: TestGateway, count = 1, fields: Record<string, unknown> = {}): Promise<string[]> {
  const events = Array.from({ length: count }, () => ({ id: randomUUID(), type: 'scan', scan_code: `code-${randomUUID().slice(0, 8)}`, ...fields }));
  await client.publishAsync(gateway.topic, JSON.stringify(events), { qos: 1 });
  return events.map((event) => event.id);
}

const idOf = (event: StreamEvent) => (JSON.parse(event.data) as { id: string }).id;

/** The customer's event ids in commit order, as the store orders them (SQLite seq; PostgreSQL tx, seq). */
async function commitOrder(target: TestServer): Promise<string[]> {
  const sql =
    TEST_STORE === 'sqlite'
      ? 'SELECT id FROM events WHERE customer_id = ? ORDER BY seq'
      : 'SELECT id FROM events WHERE customer_id = ? AND tx IS NOT NULL ORDER BY tx, seq';
  return (await selectColumn(target, sql, CUSTOMER)) as string[];
}

describe('GET /{customer_id}/events/stream', () => {
  it('sends each stored event once, in commit order: id a cursor, data its JSON as the list shows it', async () => {
    const s = await stream(t.url, STREAM, { token: t.adminToken });
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(s.headers['cache-control']).toBe('no-cache, no-transform');
    await s.until((c) => c.items.length > 0, 'the first comment');
    expect(s.items[0]).toEqual({ kind: 'comment', text: 'connected' });

    const published: string[] = [];
    for (let round = 0; round < 10; round++) {
      // Two gateways at once: their batches commit in an order the store decides.
      const ids = await Promise.all([publish(c1, g1, 2), publish(c2, g2, 2)]);
      published.push(...ids.flat());
    }
    const events = await s.eventCount(40);
    expect(events).toHaveLength(40);
    const order = (await commitOrder(t)).filter((id) => published.includes(id));
    expect(order).toHaveLength(40);
    expect(events.map(idOf)).toEqual(order);

    const { items } = await t.admin.get<{ items: { id: string }[] }>(`/${CUSTOMER}/events`, { limit: 500 });
    const listed = new Map(items.map((item) => [item.id, JSON.stringify(item)]));
    expect(events.map((event) => event.data)).toEqual(order.map((id) => listed.get(id)));

    const key = t.server.ctx.liveEvents.key;
    const positions = events.map((event) => decodeCursor(key, CUSTOMER, event.id)!);
    for (let i = 1; i < positions.length; i++) expect(comparePositions(positions[i - 1] as number[], positions[i] as number[])).toBeLessThan(0);
  });

  it('with gateway_id sends that gateway’s events only, in the same order', async () => {
    const all = await stream(t.url, STREAM, { token: t.adminToken });
    const one = await stream(t.url, `${STREAM}?gateway_id=${g1.id}`, { token: t.adminToken });
    const fromG1: string[] = [];
    const every: string[] = [];
    for (let round = 0; round < 3; round++) {
      const a = await publish(c1, g1, 2);
      const b = await publish(c2, g2, 1);
      fromG1.push(...a);
      every.push(...a, ...b);
    }
    expect((await all.eventCount(9)).map(idOf)).toEqual(every);
    expect((await one.eventCount(6)).map(idOf)).toEqual(fromG1);
    // The one after, from g1, shows that nothing of g2's slipped in.
    const [last] = await publish(c1, g1);
    expect((await one.eventCount(7)).map(idOf)).toEqual([...fromG1, last]);
    expect((await all.eventCount(10)).map(idOf)).toEqual([...every, last]);
  });

  it('resumes after Last-Event-ID with the events after it, none twice, then goes on live', async () => {
    const first = await stream(t.url, STREAM, { token: t.adminToken });
    const ids = await publish(c1, g1, 5);
    const seen = await first.eventCount(5);
    first.close();
    const later = await publish(c2, g2, 3);
    const resumed = await stream(t.url, STREAM, { token: t.adminToken, lastEventId: seen[2]!.id });
    expect((await resumed.eventCount(5)).map(idOf)).toEqual([...ids.slice(3), ...later]);
    const live = await publish(c1, g1, 2);
    expect((await resumed.eventCount(7)).map(idOf)).toEqual([...ids.slice(3), ...later, ...live]);
    expect(resumed.events().slice(0, 2).map((event) => event.id)).toEqual(seen.slice(3).map((event) => event.id));
  });

  it('answers HEAD with the headers of a stream and opens none', async () => {
    const opened = t.server.ctx.liveEvents.stats.opened;
    const answer = await call(t.url, 'HEAD', STREAM, { token: t.adminToken });
    expect({ status: answer.status, type: answer.headers['content-type'], body: answer.body }).toEqual({ status: 200, type: 'text/event-stream; charset=utf-8', body: undefined });
    expect(t.server.ctx.liveEvents.stats.opened).toBe(opened);
  });

  it('sends a heartbeat comment every interval while nothing is stored', async () => {
    const s = await stream(t.url, STREAM, { token: t.adminToken });
    await s.until((c) => c.comments().filter((text) => text === 'heartbeat').length >= 2, 'two heartbeats');
    expect(s.items.slice(0, 3)).toEqual([
      { kind: 'comment', text: 'connected' },
      { kind: 'comment', text: 'heartbeat' },
      { kind: 'comment', text: 'heartbeat' },
    ]);
  });

  it('cuts off a client that does not read, with a last comment naming the id to resume from; resumed, nothing is lost or repeated', async () => {
    const live = t.server.ctx.liveEvents;
    const cutBefore = live.stats.cut;
    const slow = await stream(t.url, STREAM, { token: t.adminToken });
    await slow.until((c) => c.items.length > 0, 'the first comment');
    slow.pause();
    let cut = false;
    live.once('cut', () => (cut = true));
    const published: string[] = [];
    // 40 events of 4 KB per message: the kernel's socket buffers (a few MB) fill, then the stream's 64 KB.
    for (let i = 0; i < 250 && !cut; i++) published.push(...(await publish(c1, g1, 40, { scan_code: 'x'.repeat(4000) })));
    expect(cut).toBe(true);
    expect(live.stats.cut).toBe(cutBefore + 1);
    slow.resume();
    await slow.ended;
    const received = slow.events();
    const last = slow.comments().at(-1);
    expect(last).toBe(`too slow, resume with Last-Event-ID ${received.at(-1)!.id}`);
    expect(received.length).toBeLessThan(published.length);
    expect(received.map(idOf)).toEqual(published.slice(0, received.length));

    const resumed = await stream(t.url, STREAM, { token: t.adminToken, lastEventId: received.at(-1)!.id });
    const rest = published.slice(received.length);
    const sentinel = await publish(c2, g2);
    expect((await resumed.eventCount(rest.length + 1)).map(idOf)).toEqual([...rest, ...sentinel]);
  });

  it('sends an event stored after the newest-numbered one was deleted (retention deletes by created)', async () => {
    const s = await stream(t.url, STREAM, { token: t.adminToken });
    // An event from a device whose clock lags: the oldest `created`, yet the last one committed.
    const [late] = await publish(c1, g1, 1, { created: Date.now() - 40 * 86_400_000 });
    expect((await s.eventCount(1)).map(idOf)).toEqual([late]);
    // What retention does to it: SQLite would then number the next event as it was numbered.
    await selectRows(t, 'DELETE FROM events WHERE id = ?', late);
    const next = await publish(c2, g2, 2);
    expect((await s.eventCount(3)).map(idOf)).toEqual([late, ...next]);
    const resumed = await stream(t.url, STREAM, { token: t.adminToken, lastEventId: s.events()[0]!.id });
    expect((await resumed.eventCount(2)).map(idOf)).toEqual(next);
  });

  it('ends the stream of an API key revoked meanwhile at its next heartbeat, saying why', async () => {
    const { id, key } = await t.admin.post<{ id: string; key: string }>(`/${CUSTOMER}/api-keys`, { name: `stream-${randomUUID().slice(0, 8)}`, permissions: ['event.read'] });
    const s = await stream(t.url, STREAM, { token: key });
    expect(s.status).toBe(200);
    const [before] = await publish(c1, g1);
    await s.eventCount(1);
    await t.admin.delete(`/${CUSTOMER}/api-keys/${id}`);
    await s.ended;
    expect(s.events().map(idOf)).toEqual([before]);
    expect(s.comments().at(-1)).toMatch(
      new RegExp(`^access ended: The API key "stream-[0-9a-f]{8}" was revoked at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z: create a new one\\., resume with Last-Event-ID ${s.events()[0]!.id.replace(/[.]/g, '\\.')}$`),
    );
  });
});

describe('a stream whose IdToken was issued before its user changed', () => {
  it('ends at its next heartbeat once the user\'s roles change (the session version moved on), saying why', async () => {
    const user = await t.createUser('USER_ROLE');
    const s = await stream(t.url, STREAM, { token: user.token });
    expect(s.status).toBe(200);
    const [before] = await publish(c1, g1);
    await s.eventCount(1);
    await t.admin.patch(`/${CUSTOMER}/users/${user.id}`, { roles: ['USER_ROLE', 'ADMIN_ROLE'] });
    await s.ended;
    expect(s.events().map(idOf)).toEqual([before]);
    expect(s.comments().at(-1)).toBe(
      `access ended: The token was issued before its user's password or roles changed: log in again for a new one., resume with Last-Event-ID ${s.events()[0]!.id}`,
    );
  });
});

describe('refusals of GET /{customer_id}/events/stream', () => {
  const badCursor = {
    title: 'Bad Request',
    details: `Header "Last-Event-ID" is not the id of an event of customer "${CUSTOMER}"'s stream: send the id of the last event received as it came, or leave the header out to start from now.`,
  };
  const refused = async (path: string, options: Parameters<typeof openSse>[2]) => {
    const answer = await openSse(t.url, path, options);
    return { status: answer.status, body: answer.body };
  };

  it('401 without a token, 403 for another customer or a key without event.read, 400 for a bad query', async () => {
    expect(await refused(STREAM, {})).toEqual({ status: 401, body: NO_HEADER });
    const other = await otherCustomerToken(t);
    expect(await refused(STREAM, { token: other })).toEqual({ status: 403, body: OTHER_CUSTOMER_REFUSED });
    const { key } = await t.admin.post<{ key: string }>(`/${CUSTOMER}/api-keys`, { name: 'gateways-only', permissions: ['gateway.read'] });
    expect(await refused(STREAM, { token: key })).toEqual({
      status: 403,
      body: { title: 'Forbidden', details: 'The API key "gateways-only" lacks the permission "event.read" this call needs; create a key with it.' },
    });
    expect(await refused(`${STREAM}?since=1h`, { token: t.adminToken })).toEqual({
      status: 400,
      body: { title: 'Bad Request', details: 'Unknown query parameter "since": it is not part of this call.' },
    });
    expect(await refused(`${STREAM}?gateway_id=`, { token: t.adminToken })).toEqual({
      status: 400,
      body: { title: 'Bad Request', details: 'Query parameter "gateway_id" must NOT have fewer than 1 characters.' },
    });
  });

  it('400 for a Last-Event-ID that is malformed, altered, another customer’s, of another shape, or past every event', async () => {
    const key = t.server.ctx.liveEvents.key;
    const s = await stream(t.url, STREAM, { token: t.adminToken });
    await publish(c1, g1);
    const [real] = await s.eventCount(1);
    const [body, signature] = real!.id.split('.') as [string, string];
    // The first character: the last one of 16 bytes in base64url carries padding bits too.
    const flipped = (signature.startsWith('A') ? 'B' : 'A') + signature.slice(1);
    const position = decodeCursor(key, CUSTOMER, real!.id)!;
    const frontier = await t.server.ctx.store.eventLog.frontier();
    for (const lastEventId of [
      'not a cursor',
      `${body}.${flipped}`,
      encodeCursor(key, 'other', position as number[]),
      encodeCursor(key, CUSTOMER, [...(position as number[]), 7]),
    ]) {
      expect({ lastEventId, ...(await refused(STREAM, { token: t.adminToken, lastEventId })) }).toEqual({ lastEventId, status: 400, body: badCursor });
    }
    const ahead = encodeCursor(key, CUSTOMER, frontier.map((n, i) => (i === 0 ? n + 1000 : n)));
    expect(await refused(STREAM, { token: t.adminToken, lastEventId: ahead })).toEqual({
      status: 400,
      body: {
        title: 'Bad Request',
        details: 'Header "Last-Event-ID" names a position past every event stored here (was the database restored from an older backup?): leave the header out to start from now.',
      },
    });
    // An empty header is no id: the stream starts from now.
    const fresh = await stream(t.url, STREAM, { token: t.adminToken, lastEventId: '' });
    expect(fresh.status).toBe(200);
  });
});

describe('live streams a user may hold', () => {
  it('10 per user on an instance, keys of the user included: the 11th is 429 with Retry-After; another user still opens; a closed one frees a place', async () => {
    const user = await t.createUser('USER_ROLE');
    const { key } = await t.admin.post<{ key: string }>(`/${CUSTOMER}/api-keys`, { name: `streams-${randomUUID().slice(0, 8)}`, permissions: ['event.read'] });
    const held = [];
    for (let i = 0; i < 10; i++) held.push(await stream(t.url, STREAM, { token: i % 2 ? key : t.adminToken }));
    expect(held.map((connection) => connection.status)).toEqual(Array.from({ length: 10 }, () => 200));
    const refusal = {
      title: 'Too Many Requests',
      details: 'You have 10 live event streams open on this server, as many as a user may: close one (or reuse it with a gateway filter on the client\'s side) before opening another.',
    };
    for (const token of [t.adminToken, key]) {
      const over = await openSse(t.url, STREAM, { token });
      expect({ status: over.status, body: over.body, retryAfter: over.headers['retry-after'], type: over.headers['content-type'] }).toEqual({
        status: 429,
        body: refusal,
        retryAfter: '5',
        type: 'application/json; charset=utf-8',
      });
    }
    expect((await stream(t.url, STREAM, { token: user.token })).status).toBe(200);
    const open = t.server.ctx.liveEvents.stats.open;
    held[0]!.close();
    await expect.poll(() => t.server.ctx.liveEvents.stats.open).toBe(open - 1);
    expect((await stream(t.url, STREAM, { token: t.adminToken })).status).toBe(200);
  });
});

describe('a restart of the server', () => {
  it('ends open streams with the id to resume from; resumed on the new process, the stream has no gap and no duplicate', async () => {
    const own = await startTestServer({ liveEvents: LIVE });
    const gateway = await provisionGateway(own);
    const mqtt = new GatewayClients();
    let second: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      const before = await mqtt.connect(gateway);
      const s = await openSse(own.url, STREAM, { token: own.adminToken });
      const first = await publish(before, gateway, 4);
      await s.eventCount(4);
      const closing = own.server.close();
      await s.ended;
      await closing;
      const lastId = s.events().at(-1)!.id;
      expect(s.comments().at(-1)).toBe(`server shutting down, resume with Last-Event-ID ${lastId}`);
      expect(s.events().map(idOf)).toEqual(first);

      // The same deployment again: its public URL (the IdTokens' audience) stays.
      second = await startServer(testServeOptions(own.dataDir, own.server.ctx.store.locator, { liveEvents: LIVE, publicUrl: own.server.publicUrl.url }));
      const after = await mqtt.connect({ ...gateway, endpoint: `mqtts://localhost:${second.mqttPort}` });
      const whileAway = await publish(after, gateway, 3);
      const resumed = await openSse(second.url, STREAM, { token: own.adminToken, lastEventId: lastId });
      const live = await publish(after, gateway, 2);
      const events = await resumed.eventCount(5);
      resumed.close();
      expect(events.map(idOf)).toEqual([...whileAway, ...live]);
      expect([...s.events(), ...events].map(idOf)).toEqual((await commitOrder({ server: second } as TestServer)).slice(-9));
    } finally {
      await mqtt.endAll();
      await second?.close();
      await own.close();
    }
  });
});
