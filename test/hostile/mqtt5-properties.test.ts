import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytesUntilClose, connectPacket5, connectRawTls, mqttPacket, mqttString, provisionGateway, publishPacket5, readBytes, type TestGateway } from '../helpers/mqtt.js';
import { collectedLogs, startTestServer, type TestServer } from '../helpers/server.js';

// A hostile MQTT 5 gateway: properties that are malformed (a length past the packet, a value past
// its Property Length, a variable byte integer of five bytes or not in its shortest form, an
// identifier unknown or not allowed in the packet), repeated (MQTT 5 2.2.2.2), or that ask for what
// the CONNACK said is not available (a topic alias). Each closes the connection with the reason
// code that names it (MQTT 5 4.13): CONNACK before the connection is accepted, DISCONNECT after;
// nothing of the packet is stored, and the broker goes on serving.

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

const text = (value: string) => [...mqttString(value)];
const scan = JSON.stringify({ id: '5e5e5e5e-0000-4000-8000-000000000001', type: 'scan', scan_code: 'HOSTILE-5', created: 1_700_000_000_000 });
/** The CONNACK 0 of level 5 is 26 bytes: the server's properties (test/mqtt/mqtt5.test.ts has them byte by byte). */
const CONNACK_OK_LENGTH = 26;

/** A PUBLISH whose bytes after the packet identifier are `after` (Property Length included), QoS 1. */
const publishWith = (after: number[], topic = gateway.topic) =>
  mqttPacket(0x32, Buffer.concat([mqttString(topic), Buffer.from([0, 1, ...after]), Buffer.from(scan)]));

const HUGE = [0xff, 0xff, 0xff, 0x7f];

describe('malformed and forbidden properties after CONNACK: DISCONNECT with the reason code, nothing stored', () => {
  it.each([
    ['a huge Property Length (268,435,455 bytes, past the packet)', () => publishWith(HUGE), 0x81, 'a Property Length of 268435455 runs past the end of the packet'],
    ['a Property Length of five bytes', () => publishWith([0xff, 0xff, 0xff, 0xff, 0x01]), 0x81, 'a variable byte integer longer than four bytes'],
    ['a Property Length not in its shortest form', () => publishWith([0x80, 0x00]), 0x81, 'a variable byte integer not in its shortest form'],
    ['a value past its Property Length', () => publishWith([3, 0x02, 0, 0]), 0x81, 'property 0x02 runs past the Property Length'],
    ['a user property whose string runs past the Property Length', () => publishWith([5, 0x26, 0, 1, 0x6b, 0, 9]), 0x81, 'property 0x26 runs past the Property Length'],
    ['an unknown property identifier', () => publishWith([2, 0x05, 1]), 0x81, 'property 0x05 unknown'],
    ['a property of another packet (Session Expiry Interval in a PUBLISH)', () => publishWith([5, 0x11, 0, 0, 0, 1]), 0x81, 'property 0x11 not allowed in this packet'],
    ['a property repeated (Message Expiry Interval twice)', () => publishWith([10, 0x02, 0, 0, 0, 9, 0x02, 0, 0, 0, 9]), 0x82, 'property 0x02 repeated'],
    ['a Topic Alias (the Topic Alias Maximum is 0)', () => publishWith([3, 0x23, 0, 1]), 0x94, 'PUBLISH with a Topic Alias (the Topic Alias Maximum is 0)'],
    ['a Topic Alias of 0', () => publishWith([3, 0x23, 0, 0]), 0x94, 'a Topic Alias of 0'],
    ['an empty topic that a Topic Alias would stand for', () => publishWith([3, 0x23, 0, 1], ''), 0x94, 'PUBLISH with a Topic Alias (the Topic Alias Maximum is 0)'],
    ['an empty topic without a Topic Alias', () => publishWith([0], ''), 0x82, 'PUBLISH with an empty topic name and no Topic Alias'],
    ['a Subscription Identifier, which only the server sends', () => publishWith([2, 0x0b, 1]), 0x82, 'PUBLISH with a Subscription Identifier'],
    ['a Payload Format Indicator of 2', () => publishWith([2, 0x01, 2]), 0x82, 'property 0x01 of 2, not 0 or 1'],
    ['a SUBSCRIBE with reserved subscription option bits', () => mqttPacket(0x82, Buffer.from([0, 1, 0, ...text('a'), 0x41])), 0x81, 'SUBSCRIBE with subscription options 0x41'],
    ['a SUBSCRIBE with a Retain Handling of 3', () => mqttPacket(0x82, Buffer.from([0, 1, 0, ...text('a'), 0x31])), 0x82, 'SUBSCRIBE with a Retain Handling of 3'],
    ['a SUBSCRIBE with a Subscription Identifier of 0', () => mqttPacket(0x82, Buffer.from([0, 1, 2, 0x0b, 0, ...text('a'), 1])), 0x82, 'property 0x0b of 0'],
    ['a SUBSCRIBE with a huge Property Length', () => mqttPacket(0x82, Buffer.from([0, 1, ...HUGE, ...text('a'), 1])), 0x81, 'a Property Length of 268435455 runs past the end of the packet'],
    ['a DISCONNECT with a property of another packet', () => mqttPacket(0xe0, Buffer.from([0, 3, 0x21, 0, 1])), 0x81, 'property 0x21 not allowed in this packet'],
  ])('%s', async (_name, packet, reasonCode, reason) => {
    const socket = await connectRawTls(gateway);
    socket.on('error', () => {});
    socket.write(connectPacket5());
    expect((await readBytes(socket, CONNACK_OK_LENGTH))[3]).toBe(0);
    const events = t.server.broker.ingest.messages;
    socket.write(Buffer.concat([packet(), publishPacket5(gateway.topic, scan, { packetId: 2 })]));
    expect(await bytesUntilClose(socket)).toEqual([0xe0, 1, reasonCode]);
    await expect.poll(() => logs.filter((line) => line.msg === 'gateway connection closed on error' && line.reason === reason)).toEqual([expect.objectContaining({ gateway_id: gateway.id })]);
    expect(t.server.broker.ingest.messages).toBe(events);
  });
});

describe('malformed and forbidden properties in the CONNECT: CONNACK with the reason code, then the connection closes', () => {
  it.each([
    ['a huge Property Length', () => connectPacket5({ properties: [] }), HUGE, 0x81],
    ['Receive Maximum twice', () => connectPacket5({ properties: [0x21, 0, 5, 0x21, 0, 6] }), undefined, 0x82],
    ['a Receive Maximum of 0', () => connectPacket5({ properties: [0x21, 0, 0] }), undefined, 0x82],
    ['a Maximum Packet Size of 0', () => connectPacket5({ properties: [0x27, 0, 0, 0, 0] }), undefined, 0x82],
    ['an unknown property identifier', () => connectPacket5({ properties: [0x7f, 0] }), undefined, 0x81],
    ['a property only the server sends (Maximum QoS)', () => connectPacket5({ properties: [0x24, 1] }), undefined, 0x81],
    ['a Request Problem Information of 2', () => connectPacket5({ properties: [0x17, 2] }), undefined, 0x82],
    ['Authentication Data without a method', () => connectPacket5({ properties: [0x16, 0, 1, 0x61] }), undefined, 0x82],
    ['a will with a Topic Alias', () => connectPacket5({ will: { topic: 't', payload: 'p', properties: [0x23, 0, 1] } }), undefined, 0x81],
    ['a will with a Will Delay Interval twice', () => connectPacket5({ will: { topic: 't', payload: 'p', properties: [0x18, 0, 0, 0, 1, 0x18, 0, 0, 0, 1] } }), undefined, 0x82],
  ])('%s', async (_name, connect, propertyLength, reasonCode) => {
    // A huge Property Length replaces the CONNECT's (one byte, 0, after the keep alive).
    const plain = connect();
    const bytes = propertyLength ? Buffer.concat([Buffer.from([0x10, plain[1]! + 3]), plain.subarray(2, 12), Buffer.from(propertyLength), plain.subarray(13)]) : plain;
    const socket = await connectRawTls(gateway);
    socket.write(bytes);
    expect(await bytesUntilClose(socket)).toEqual([0x20, 3, 0, reasonCode, 0]);
  });

  it('still serves an MQTT 5 gateway after all of them', async () => {
    const socket = await connectRawTls(gateway);
    socket.write(connectPacket5());
    expect((await readBytes(socket, CONNACK_OK_LENGTH))[3]).toBe(0);
    socket.write(publishPacket5(gateway.topic, scan, { packetId: 3, properties: [0x02, 0, 0, 0, 60] }));
    expect([...(await readBytes(socket, 4))]).toEqual([0x40, 2, 0, 3]);
    socket.destroy();
  });
});
