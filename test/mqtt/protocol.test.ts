import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRawTls, mqttString, provisionGateway, readBytes, remainingLength, type TestGateway } from '../helpers/mqtt.js';
import { CUSTOMER, collectedLogs, startTestServer, type TestServer } from '../helpers/server.js';

// The MQTT a gateway may speak beyond CONNECT and QoS 1 PUBLISH, over a raw TLS socket with the
// certificate the service issued: packets sent before the CONNACK, QoS 2, PUBREL, UNSUBSCRIBE,
// PINGREQ, a second CONNECT, the will, DISCONNECT and the keep alive ([MQTT-3.1] to [MQTT-3.14]).

let t: TestServer;
let logs: { msg: string; [field: string]: unknown }[];
let gateway: TestGateway;

beforeAll(async () => {
  const collected = collectedLogs('info');
  logs = collected.lines;
  t = await startTestServer({ logger: collected.logger });
  gateway = await provisionGateway(t);
});
afterAll(() => t?.close());

const packet = (firstByte: number, body: Buffer) => Buffer.concat([Buffer.from([firstByte, ...remainingLength(body.length)]), body]);

/** CONNECT of MQTT 3.1.1 with a keep alive and, optionally, a will (QoS 0). */
function connect({ keepAlive = 60, will }: { keepAlive?: number; will?: { topic: string; payload: string } } = {}): Buffer {
  const flags = 0x02 | (will ? 0x04 : 0);
  const fields = [mqttString('MQTT'), Buffer.from([4, flags, keepAlive >> 8, keepAlive & 0xff]), mqttString('device')];
  if (will) fields.push(mqttString(will.topic), mqttString(will.payload));
  return packet(0x10, Buffer.concat(fields));
}

const id = (n: number) => Buffer.from([n >> 8, n & 0xff]);
const publish = (qos: 0 | 1 | 2, packetId: number, payload: string, topic = gateway.topic) =>
  packet(0x30 | (qos << 1), Buffer.concat([mqttString(topic), qos ? id(packetId) : Buffer.alloc(0), Buffer.from(payload)]));
const scan = (eventId: string) => JSON.stringify({ id: eventId, type: 'scan', scan_code: 'A-1', created: 1_700_000_000_000 });
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

const CONNACK_OK = [0x20, 2, 0, 0];

async function rawConnection(): Promise<TLSSocket> {
  const socket = await connectRawTls(gateway);
  socket.on('error', () => {});
  return socket;
}

/** Everything the server sends until it closes the connection. */
function bytesUntilClose(socket: TLSSocket): Promise<number[]> {
  const received: number[] = [];
  socket.on('data', (chunk: Buffer) => received.push(...chunk));
  socket.resume();
  return new Promise((resolve) => (socket.closed ? resolve(received) : socket.once('close', () => resolve(received))));
}

/** Events of the gateway, oldest first: their ids and scan codes. */
async function storedEvents(): Promise<string[]> {
  const page = await t.admin.get<{ items: { id: string }[] }>(`/${CUSTOMER}/events?gateway_id=${gateway.id}&start_time_millis=0&end_time_millis=${Date.now() + 86_400_000}`);
  return page.items.map((event) => event.id).sort();
}

describe('a raw MQTT 3.1.1 gateway', () => {
  it('may send packets right after CONNECT: they are read once CONNACK went out, PUBACKs in order of the PUBLISHes', async () => {
    const socket = await rawConnection();
    const publishes = Array.from({ length: 20 }, (_, i) => publish(1, i + 1, scan(uuid(100 + i))));
    socket.write(Buffer.concat([connect(), ...publishes]));
    const answer = await readBytes(socket, 4 + 20 * 4);
    expect([...answer.subarray(0, 4)]).toEqual(CONNACK_OK);
    expect([...answer.subarray(4)]).toEqual(Array.from({ length: 20 }, (_, i) => [0x40, 2, 0, i + 1]).flat());
    socket.write(Buffer.from([0xc0, 0]));
    expect([...(await readBytes(socket, 2))]).toEqual([0xd0, 0]);
    socket.destroy();
    expect((await storedEvents()).filter((eventId) => eventId.startsWith('00000000-0000-4000-8000-0000000001'))).toHaveLength(20);
  });

  it('QoS 2: PUBREC once stored, PUBCOMP for the PUBREL; a redelivered PUBLISH is stored once', async () => {
    const socket = await rawConnection();
    socket.write(connect());
    expect([...(await readBytes(socket, 4))]).toEqual(CONNACK_OK);
    socket.write(publish(2, 7, scan(uuid(200))));
    expect([...(await readBytes(socket, 4))]).toEqual([0x50, 2, 0, 7]);
    // [MQTT-4.3.3]: the sender may send it again (DUP) until it sees PUBREC; the id makes that harmless.
    socket.write(publish(2, 7, scan(uuid(200))));
    expect([...(await readBytes(socket, 4))]).toEqual([0x50, 2, 0, 7]);
    socket.write(packet(0x62, id(7)));
    expect([...(await readBytes(socket, 4))]).toEqual([0x70, 2, 0, 7]);
    socket.destroy();
    expect((await storedEvents()).filter((eventId) => eventId === uuid(200))).toEqual([uuid(200)]);
  });

  it('UNSUBSCRIBE gets its UNSUBACK; PUBACK, PUBREC and PUBCOMP from the gateway are ignored; the connection stays', async () => {
    const socket = await rawConnection();
    socket.write(connect());
    expect([...(await readBytes(socket, 4))]).toEqual(CONNACK_OK);
    socket.write(Buffer.concat([packet(0x40, id(3)), packet(0x50, id(3)), packet(0x70, id(3)), packet(0xa2, Buffer.concat([id(9), mqttString('a/#')]))]));
    expect([...(await readBytes(socket, 4))]).toEqual([0xb0, 2, 0, 9]);
    socket.write(Buffer.from([0xc0, 0]));
    expect([...(await readBytes(socket, 2))]).toEqual([0xd0, 0]);
    socket.destroy();
  });

  it.each([
    ['a second CONNECT ([MQTT-3.1.0-2])', () => connect(), 'unexpected packet type 1'],
    ['a PUBLISH of QoS 3 ([MQTT-3.3.1-4])', () => packet(0x36, Buffer.concat([mqttString(gateway.topic), id(1), Buffer.from('{}')])), 'PUBLISH with QoS 3'],
    ['a SUBSCRIBE with the wrong flags ([MQTT-3.8.1-1])', () => packet(0x80, Buffer.concat([id(1), mqttString('a'), Buffer.from([0])])), 'malformed SUBSCRIBE'],
    ['a CONNACK, which only a server sends', () => Buffer.from(CONNACK_OK), 'unexpected packet type 2'],
  ])('closes the connection at %s, logging why', async (_name, bad, reason) => {
    const socket = await rawConnection();
    socket.write(connect());
    expect([...(await readBytes(socket, 4))]).toEqual(CONNACK_OK);
    socket.write(bad());
    expect(await bytesUntilClose(socket)).toEqual([]);
    // The server logs once its side of the connection closed too.
    await expect
      .poll(() => logs.filter((line) => line.msg === 'gateway connection closed on error' && line.reason === reason))
      .toEqual([expect.objectContaining({ gateway_id: gateway.id, reason })]);
  });

  it.each([
    ['whole in one chunk', 0],
    ['completed by the chunk that carries the next PUBLISH', 9],
  ])('a PUBLISH refused %s: nothing after it is stored, and it is logged once', async (_name, split) => {
    const socket = await rawConnection();
    socket.write(connect());
    expect([...(await readBytes(socket, 4))]).toEqual(CONNACK_OK);
    const refusedBefore = logs.filter((line) => line.msg === 'MQTT publish refused, connection closed').length;
    const bytes = Buffer.concat([publish(1, 1, scan(uuid(400 + split)), 'scanhub/other/gateway/x'), publish(1, 2, scan(uuid(401 + split)))]);
    if (split) socket.write(bytes.subarray(0, split));
    socket.write(bytes.subarray(split));
    expect(await bytesUntilClose(socket)).toEqual([]);
    await expect.poll(() => logs.filter((line) => line.msg === 'MQTT publish refused, connection closed').length).toBe(refusedBefore + 1);
    expect(logs.filter((line) => line.msg === 'MQTT packet with a malformed Remaining Length, connection closed')).toEqual([]);
    expect((await storedEvents()).filter((eventId) => eventId === uuid(400 + split) || eventId === uuid(401 + split))).toEqual([]);
  });

  it('publishes the will of a connection that drops to its own topic, not that of one that says DISCONNECT', async () => {
    const dropped = await rawConnection();
    dropped.write(connect({ will: { topic: gateway.topic, payload: scan(uuid(300)) } }));
    expect([...(await readBytes(dropped, 4))]).toEqual(CONNACK_OK);
    const events = t.server.broker.ingest.events;
    dropped.destroy();
    await expect.poll(() => t.server.broker.ingest.events).toBe(events + 1);

    const polite = await rawConnection();
    polite.write(connect({ will: { topic: gateway.topic, payload: scan(uuid(301)) } }));
    expect([...(await readBytes(polite, 4))]).toEqual(CONNACK_OK);
    polite.write(Buffer.from([0xe0, 0]));
    expect(await bytesUntilClose(polite)).toEqual([]);

    const refused = t.server.broker.stats.publishesRefused;
    const foreign = await rawConnection();
    foreign.write(connect({ will: { topic: 'scanhub/other/gateway/x', payload: scan(uuid(302)) } }));
    expect([...(await readBytes(foreign, 4))]).toEqual(CONNACK_OK);
    foreign.destroy();
    await expect.poll(() => t.server.broker.stats.publishesRefused).toBe(refused + 1);
    const stored = await storedEvents();
    expect([uuid(300), uuid(301), uuid(302)].map((eventId) => stored.includes(eventId))).toEqual([true, false, false]);
  });

  it('closes a connection silent for one and a half times its keep alive ([MQTT-3.1.2-24])', async () => {
    const socket = await rawConnection();
    const started = Date.now();
    socket.write(connect({ keepAlive: 1 }));
    expect([...(await readBytes(socket, 4))]).toEqual(CONNACK_OK);
    expect(await bytesUntilClose(socket)).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    await expect.poll(() => logs.filter((line) => line.msg === 'gateway connection closed on error' && line.reason === 'no packet within 1.5 s (keep alive)')).toHaveLength(1);
  });
});
