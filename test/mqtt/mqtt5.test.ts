import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import type { IConnackPacket } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  GatewayClients,
  bytesUntilClose,
  connectPacket5,
  connectRawTls,
  extractPemFiles,
  mqttPacket,
  mqttString,
  provisionGateway,
  publishPacket5,
  readBytes,
  runMosquitto,
  type TestGateway,
} from '../helpers/mqtt.js';
import { CUSTOMER, collectedLogs, startTestServer, type TestServer } from '../helpers/server.js';

// MQTT 5 (protocol level 5) on the same listener: CONNACK with the server's properties and reason
// codes, PUBLISH with properties, SUBSCRIBE refused per filter with a reason code, DISCONNECT with
// a reason both ways (MQTT 5 3.1 to 3.14), over raw TLS bytes and with mqtt.js at protocol version 5.

let t: TestServer;
let logs: { msg: string; [field: string]: unknown }[];
let gateway: TestGateway;
const clients = new GatewayClients({ protocolVersion: 5 });

beforeAll(async () => {
  const collected = collectedLogs('info');
  logs = collected.lines;
  t = await startTestServer({ logger: collected.logger });
  gateway = await provisionGateway(t);
});
afterEach(() => clients.endAll());
afterAll(() => t?.close());

/** The properties of every CONNACK 0 (MQTT 5 3.2.2.3): Receive Maximum 4096, Maximum QoS 1, Retain Available 0, Maximum Packet Size 327,680, Topic Alias Maximum 0, no wildcard, subscription identifier or shared subscriptions. */
const SERVER_PROPERTIES = [0x21, 0x10, 0x00, 0x24, 1, 0x25, 0, 0x27, 0, 0x05, 0, 0, 0x22, 0, 0, 0x28, 0, 0x29, 0, 0x2a, 0];
const CONNACK_OK = [0x20, 3 + SERVER_PROPERTIES.length, 0, 0, SERVER_PROPERTIES.length, ...SERVER_PROPERTIES];

const scan = (eventId: string) => JSON.stringify({ id: eventId, type: 'scan', scan_code: 'V5-1', created: 1_700_000_000_000 });
const uuid = (n: number) => `00000000-0000-4000-8005-${String(n).padStart(12, '0')}`;
/** A two-byte-length string as property bytes. */
const text = (value: string) => [...mqttString(value)];

async function connected(properties: number[] = [], clientId?: string): Promise<TLSSocket> {
  const socket = await connectRawTls(gateway);
  socket.on('error', () => {});
  socket.write(connectPacket5({ properties, clientId }));
  expect([...(await readBytes(socket, CONNACK_OK.length))]).toEqual(CONNACK_OK);
  return socket;
}

/** The ids of the gateway's stored events among `ids`. */
async function stored(ids: string[]): Promise<string[]> {
  const page = await t.admin.get<{ items: { id: string }[] }>(`/${CUSTOMER}/events?gateway_id=${gateway.id}&start_time_millis=0&end_time_millis=${Date.now() + 86_400_000}`);
  return page.items.map((event) => event.id).filter((id) => ids.includes(id)).sort();
}

describe('CONNECT and CONNACK at level 5', () => {
  it('answers CONNACK 0 with the server properties, and stores a PUBLISH whose properties it reads past', async () => {
    const socket = await connected();
    // Payload Format Indicator 1, Message Expiry Interval 60, Content Type, Correlation Data, two User Properties.
    const properties = [0x01, 1, 0x02, 0, 0, 0, 60, 0x03, ...text('application/json'), 0x09, 0, 2, 0xbe, 0xef, 0x26, ...text('k'), ...text('v'), 0x26, ...text('k'), ...text('w')];
    socket.write(Buffer.concat([publishPacket5(gateway.topic, scan(uuid(1)), { packetId: 7, properties }), publishPacket5(gateway.topic, scan(uuid(2)), { packetId: 8 })]));
    // MQTT 5 3.4.2: success keeps the two-byte form (reason code 0x00, no properties).
    expect([...(await readBytes(socket, 8))]).toEqual([0x40, 2, 0, 7, 0x40, 2, 0, 8]);
    socket.write(Buffer.from([0xc0, 0]));
    expect([...(await readBytes(socket, 2))]).toEqual([0xd0, 0]);
    socket.destroy();
    expect(await stored([uuid(1), uuid(2)])).toEqual([uuid(1), uuid(2)]);
  });

  it('says it keeps no session when one is asked for, and assigns the gateway id to an empty client identifier', async () => {
    const socket = await connectRawTls(gateway);
    // Session Expiry Interval 3600, Receive Maximum 10, Maximum Packet Size 1024, Request Problem Information 0, a User Property.
    const properties = [0x11, 0, 0, 0x0e, 0x10, 0x21, 0, 10, 0x27, 0, 0, 4, 0, 0x17, 0, 0x26, ...text('a'), ...text('b')];
    socket.write(connectPacket5({ properties, clientId: '' }));
    const extra = [0x11, 0, 0, 0, 0, 0x12, ...text(gateway.id)];
    const length = SERVER_PROPERTIES.length + extra.length;
    expect([...(await readBytes(socket, 5 + length))]).toEqual([0x20, 2 + 1 + length, 0, 0, length, ...SERVER_PROPERTIES, ...extra]);
    socket.destroy();
  });

  it('refuses a deleted gateway with CONNACK 0x87 "not authorized" in the MQTT 5 form', async () => {
    const deleted = await provisionGateway(t);
    await t.admin.delete(`/${CUSTOMER}/gateways/${deleted.id}`);
    const socket = await connectRawTls(deleted);
    socket.write(connectPacket5());
    expect(await bytesUntilClose(socket)).toEqual([0x20, 3, 0, 0x87, 0]);
    await expect(clients.connect(deleted)).rejects.toMatchObject({ code: 0x87 });
  });

  it('mqtt.js at protocol version 5: connects, reads the server properties, publishes at QoS 0 and 1 with properties, gets 0x87 for a subscription', async () => {
    const client = await clients.connect(gateway, { properties: { sessionExpiryInterval: 0, receiveMaximum: 100 } });
    // The CONNACK mqtt.js keeps (a private field: connectAsync resolves after its 'connect' event).
    expect((client as unknown as { connackPacket: IConnackPacket }).connackPacket).toMatchObject({
      reasonCode: 0,
      properties: {
        receiveMaximum: 4096,
        maximumQoS: 1,
        retainAvailable: false,
        maximumPacketSize: 327_680,
        topicAliasMaximum: 0,
        wildcardSubscriptionAvailable: false,
        subscriptionIdentifiersAvailable: false,
        sharedSubscriptionAvailable: false,
      },
    });
    const properties = { messageExpiryInterval: 30, contentType: 'application/json', userProperties: { station: 'gate-5' } };
    await client.publishAsync(gateway.topic, scan(uuid(10)), { qos: 1, properties });
    await client.publishAsync(gateway.topic, scan(uuid(11)), { qos: 0, properties });
    // Its own command topic is granted (docs/commands.md); any other filter is refused with 0x87.
    expect(await client.subscribeAsync(`${gateway.topic}/commands`, { qos: 1 })).toMatchObject([{ topic: `${gateway.topic}/commands`, qos: 1 }]);
    await expect(client.subscribeAsync(`${gateway.topic}/other`, { qos: 1 })).rejects.toMatchObject({
      message: 'Subscribe error: Not authorized',
      packet: { cmd: 'suback', granted: [0x87] },
    });
    await client.publishAsync(gateway.topic, scan(uuid(12)), { qos: 1 });
    await expect.poll(() => stored([uuid(10), uuid(11), uuid(12)])).toEqual([uuid(10), uuid(11), uuid(12)]);
  });
});

describe('refusals at level 5: the reason code first, then the connection closes as at 3.1.1', () => {
  it('a PUBLISH to another topic: the messages before it are acknowledged, it gets PUBACK 0x87, then DISCONNECT 0x87', async () => {
    const socket = await connected();
    const refused = t.server.broker.stats.publishesRefused;
    socket.write(
      Buffer.concat([
        publishPacket5(gateway.topic, scan(uuid(20)), { packetId: 1 }),
        publishPacket5(gateway.topic, scan(uuid(21)), { packetId: 2 }),
        publishPacket5('scanhub/other/gateway/x', scan(uuid(22)), { packetId: 3 }),
        publishPacket5(gateway.topic, scan(uuid(23)), { packetId: 4 }),
      ]),
    );
    expect(await bytesUntilClose(socket)).toEqual([0x40, 2, 0, 1, 0x40, 2, 0, 2, 0x40, 3, 0, 3, 0x87, 0xe0, 1, 0x87]);
    expect(await stored([uuid(20), uuid(21), uuid(22), uuid(23)])).toEqual([uuid(20), uuid(21)]);
    expect(t.server.broker.stats.publishesRefused).toBe(refused + 1);
  });

  it.each([
    ['a QoS 0 PUBLISH to another topic: DISCONNECT 0x87', () => publishPacket5('scanhub/other/gateway/x', scan(uuid(30)), { qos: 0 }), [0xe0, 1, 0x87]],
    ['a payload over 256 KiB: PUBACK 0x97 "quota exceeded", then DISCONNECT 0x97', () => publishPacket5(gateway.topic, 'x'.repeat(262_145), { packetId: 9 }), [0x40, 3, 0, 9, 0x97, 0xe0, 1, 0x97]],
    ['a packet over 320 KiB: DISCONNECT 0x95 "packet too large"', () => Buffer.from([0x32, 0xff, 0xff, 0x7f]), [0xe0, 1, 0x95]],
    ['QoS 2, over the Maximum QoS 1: DISCONNECT 0x9B', () => publishPacket5(gateway.topic, scan(uuid(31)), { qos: 2 }), [0xe0, 1, 0x9b]],
    ['retain, not available: DISCONNECT 0x9A', () => publishPacket5(gateway.topic, scan(uuid(32)), { flags: 0x01 }), [0xe0, 1, 0x9a]],
    ['packet identifier 0: DISCONNECT 0x82 "protocol error"', () => publishPacket5(gateway.topic, scan(uuid(33)), { packetId: 0 }), [0xe0, 1, 0x82]],
    ['a second CONNECT: DISCONNECT 0x82', () => connectPacket5(), [0xe0, 1, 0x82]],
  ])('%s', async (_name, bad, expected) => {
    const socket = await connected();
    socket.write(bad());
    expect(await bytesUntilClose(socket)).toEqual(expected);
    expect(await stored([uuid(30), uuid(31), uuid(32), uuid(33)])).toEqual([]);
  });

  it('a CONNECT asking for what the CONNACK would not offer: a will of QoS 2 (0x9B), a retained will (0x9A), extended authentication (0x8C)', async () => {
    const answers: number[][] = [];
    for (const connect of [
      connectPacket5({ will: { topic: gateway.topic, payload: scan(uuid(40)), qos: 2 } }),
      connectPacket5({ will: { topic: gateway.topic, payload: scan(uuid(40)), retain: true } }),
      connectPacket5({ properties: [0x15, ...text('SCRAM-SHA-1')] }),
    ]) {
      const socket = await connectRawTls(gateway);
      socket.write(connect);
      answers.push(await bytesUntilClose(socket));
    }
    expect(answers).toEqual([
      [0x20, 3, 0, 0x9b, 0],
      [0x20, 3, 0, 0x9a, 0],
      [0x20, 3, 0, 0x8c, 0],
    ]);
  });

  it('closes a connection silent for one and a half times its keep alive with DISCONNECT 0x8D', async () => {
    const socket = await connectRawTls(gateway);
    socket.write(connectPacket5({ keepAlive: 1 }));
    expect([...(await readBytes(socket, CONNACK_OK.length))]).toEqual(CONNACK_OK);
    expect(await bytesUntilClose(socket)).toEqual([0xe0, 1, 0x8d]);
  });

  it('tells a connected gateway DISCONNECT 0x8B "server shutting down" when the server stops', async () => {
    const own = await startTestServer();
    try {
      const ownGateway = await provisionGateway(own);
      const socket = await connectRawTls(ownGateway);
      socket.on('error', () => {});
      socket.write(connectPacket5());
      expect([...(await readBytes(socket, CONNACK_OK.length))]).toEqual(CONNACK_OK);
      socket.write(publishPacket5(ownGateway.topic, scan(uuid(70)), { packetId: 5 }));
      expect([...(await readBytes(socket, 4))]).toEqual([0x40, 2, 0, 5]);
      const bytes = bytesUntilClose(socket);
      await own.close();
      expect(await bytes).toEqual([0xe0, 1, 0x8b]);
    } finally {
      await own.close();
    }
  });

  it('a second connection of the gateway takes the session over: the first gets DISCONNECT 0x8E; a deleted gateway’s gets 0x98', async () => {
    const first = await connected();
    const firstBytes = bytesUntilClose(first);
    const second = await connected();
    expect(await firstBytes).toEqual([0xe0, 1, 0x8e]);
    const secondBytes = bytesUntilClose(second);
    const other = await provisionGateway(t);
    const third = await connectRawTls(other);
    third.write(connectPacket5());
    expect([...(await readBytes(third, CONNACK_OK.length))]).toEqual(CONNACK_OK);
    await t.admin.delete(`/${CUSTOMER}/gateways/${other.id}`);
    expect(await bytesUntilClose(third)).toEqual([0xe0, 1, 0x98]);
    second.destroy();
    expect(await secondBytes).toEqual([]);
  });
});

describe('SUBSCRIBE, UNSUBSCRIBE and DISCONNECT at level 5', () => {
  it('grants its command topic, refuses each other filter with the reason code that fits and keeps the connection; UNSUBACK says no subscription existed', async () => {
    const socket = await connected();
    const options = (qos: number) => [qos];
    const filters = [
      [...text(`${gateway.topic}/commands`), ...options(1)],
      [...text('scanhub/#'), ...options(0)],
      [...text('$share/group/a'), ...options(1)],
      [...text(''), ...options(0)],
    ].flat();
    socket.write(mqttPacket(0x82, Buffer.from([0, 5, 0, ...filters])));
    // Its own command topic granted at QoS 1; the others refused, each with the reason that fits.
    expect([...(await readBytes(socket, 9))]).toEqual([0x90, 7, 0, 5, 0, 1, 0xa2, 0x9e, 0x8f]);
    // With a Subscription Identifier (not available): 0xA1.
    socket.write(mqttPacket(0x82, Buffer.from([0, 6, 2, 0x0b, 7, ...text('a/b'), 1])));
    expect([...(await readBytes(socket, 6))]).toEqual([0x90, 4, 0, 6, 0, 0xa1]);
    socket.write(mqttPacket(0xa2, Buffer.from([0, 7, 0, ...text('a/b'), ...text('c')])));
    expect([...(await readBytes(socket, 7))]).toEqual([0xb0, 5, 0, 7, 0, 0x11, 0x11]);
    expect(logs.filter((line) => line.msg === 'MQTT subscription refused' && line.topic === 'scanhub/#')).toHaveLength(1);
    socket.write(Buffer.from([0xc0, 0]));
    expect([...(await readBytes(socket, 2))]).toEqual([0xd0, 0]);
    socket.destroy();
  });

  it('publishes the will at DISCONNECT 0x04 "with will message", not at DISCONNECT 0x00 or one without a reason code', async () => {
    const events = () => t.server.broker.ingest.events;
    for (const [id, disconnect] of [
      [uuid(50), [0xe0, 2, 0x04, 0]],
      [uuid(51), [0xe0, 1, 0x00]],
      [uuid(52), [0xe0, 0]],
    ] as const) {
      const socket = await connectRawTls(gateway);
      socket.write(connectPacket5({ will: { topic: gateway.topic, payload: scan(id), properties: [0x18, 0, 0, 0, 5, 0x01, 1] } }));
      expect([...(await readBytes(socket, CONNACK_OK.length))]).toEqual(CONNACK_OK);
      const before = events();
      socket.write(Buffer.from(disconnect));
      expect(await bytesUntilClose(socket)).toEqual([]);
      if (id === uuid(50)) await expect.poll(events).toBe(before + 1);
    }
    expect(await stored([uuid(50), uuid(51), uuid(52)])).toEqual([uuid(50)]);
  });
});

describe('stock mosquitto clients at -V mqttv5, with the PEM files of the PKCS#12', () => {
  it('mosquitto_pub publishes scans that are stored, and is told "not authorized" for another topic; mosquitto_sub receives a command', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scanhub-mqttv5-'));
    try {
      extractPemFiles(gateway, dir);
      const published = await runMosquitto('mosquitto_pub', dir, gateway, ['-V', 'mqttv5', '-q', '1', '-t', gateway.topic, '-m', scan(uuid(60)), '-D', 'publish', 'message-expiry-interval', '60']);
      expect(published).toEqual({ code: 0, stdout: '', stderr: '' });
      expect(await stored([uuid(60)])).toEqual([uuid(60)]);
      const refused = await runMosquitto('mosquitto_pub', dir, gateway, ['-V', 'mqttv5', '-q', '1', '-t', 'scanhub/other/gateway/x', '-m', scan(uuid(61))]);
      // PUBACK 0x87 names the refusal; the DISCONNECT that follows makes it exit non-zero.
      expect({ failed: refused.code !== 0, firstLine: refused.stderr.split('\n')[0] }).toEqual({ failed: true, firstLine: 'Warning: Publish 1 failed: Not authorized.' });
      expect(await stored([uuid(61)])).toEqual([]);
      // mosquitto_sub at level 5 receives a command queued for the gateway (docs/commands.md), with -d
      // printing the packets: the SUBACK grants QoS 1, the PUBLISH carries the command's Message
      // Expiry Interval, and mosquitto_sub acknowledges it.
      const command = await t.admin.post<{ command_id: string }>(`/${CUSTOMER}/gateways/${gateway.id}/commands`, { name: 'feedback', parameters: { sequence: 'OK' } });
      const topic = `${gateway.topic}/commands`;
      const subscribed = await runMosquitto('mosquitto_sub', dir, gateway, ['-V', 'mqttv5', '-q', '1', '-t', topic, '-C', '1', '-W', '10', '-d']);
      const lines = subscribed.stdout.split('\n');
      expect({ code: subscribed.code, stderr: subscribed.stderr, first: lines.slice(0, 5) }).toEqual({
        code: 0,
        stderr: '',
        first: [
          'Client (null) sending CONNECT',
          `Client ${gateway.id} received CONNACK (0)`,
          `Client ${gateway.id} sending SUBSCRIBE (Mid: 1, Topic: ${topic}, QoS: 1, Options: 0x00)`,
          `Client ${gateway.id} received SUBACK`,
          'Subscribed (mid: 1): 1',
        ],
      });
      expect(lines[5]).toMatch(new RegExp(`^Client ${gateway.id} received PUBLISH \\(d0, q1, r0, m\\d+, '${topic}', \\.\\.\\. \\(\\d+ bytes\\)\\)$`));
      const received = JSON.parse(lines.find((line) => line.startsWith('{'))!) as { command_id: string; name: string; parameters: unknown };
      expect({ command_id: received.command_id, name: received.name, parameters: received.parameters }).toEqual({ command_id: command.command_id, name: 'feedback', parameters: { sequence: 'OK' } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
