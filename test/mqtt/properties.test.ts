import mqttPacket from 'mqtt-packet';
import { describe, expect, it } from 'vitest';
import { publishPacket, suback } from '../../src/mqtt/packets.js';
import { In, Property, readProperties, readVariableByteInteger, variableByteInteger, writeProperties } from '../../src/mqtt/properties.js';
import { ProtocolError } from '../../src/mqtt/protocol-error.js';

// MQTT 5 properties and variable byte integers (MQTT 5 1.5.5, 2.2.2), and the packets the broker
// writes at each level, read back by mqtt-packet (mqtt.js's parser) as an independent reader.

/** Parses one whole packet with mqtt-packet at the protocol version given. */
function parsed(bytes: Buffer, protocolVersion: 4 | 5): mqttPacket.Packet {
  const parser = mqttPacket.parser({ protocolVersion });
  const packets: mqttPacket.Packet[] = [];
  parser.on('packet', (packet) => packets.push(packet));
  parser.on('error', (error) => {
    throw error;
  });
  parser.parse(bytes);
  expect(packets).toHaveLength(1);
  return packets[0]!;
}

describe('variable byte integers', () => {
  // The Remaining Length's encoding (test/mqtt/packets.test.ts has every boundary).
  it.each([
    [127, [0x7f]],
    [128, [0x80, 0x01]],
    [268_435_455, [0xff, 0xff, 0xff, 0x7f]],
  ])('%i is written as %j and read back', (value, bytes) => {
    expect(variableByteInteger(value)).toEqual(bytes);
    expect(readVariableByteInteger(Buffer.from(bytes), 0)).toEqual([value, bytes.length]);
  });

  it.each([
    ['five bytes', [0xff, 0xff, 0xff, 0xff, 0x01], 'a variable byte integer longer than four bytes'],
    ['a longer form than needed', [0x81, 0x00], 'a variable byte integer not in its shortest form'],
    ['a last byte that asks for more', [0x80], 'a variable byte integer runs past its end'],
  ])('refuses %s as malformed', (_name, bytes, message) => {
    expect(() => readVariableByteInteger(Buffer.from(bytes), 0)).toThrow(new ProtocolError(message));
  });
});

describe('properties', () => {
  it('reads what writeProperties wrote, each type at its place; User Property may repeat', () => {
    const written = writeProperties([
      [Property.PAYLOAD_FORMAT_INDICATOR, 1],
      [Property.TOPIC_ALIAS, 0x1234],
      [Property.MESSAGE_EXPIRY_INTERVAL, 0xfedc_ba98],
      [Property.SUBSCRIPTION_IDENTIFIER, 200],
      [Property.CONTENT_TYPE, 'application/json'],
    ]);
    const user = Buffer.from([0x26, 0, 1, 0x6b, 0, 1, 0x76]);
    const body = Buffer.concat([Buffer.from([written[0]! + 2 * user.length]), written.subarray(1), user, user, Buffer.from('payload')]);
    const seen: [number, number, string][] = [];
    const end = readProperties(body, 0, In.PUBLISH, (id, value, start, stop) => seen.push([id, value, body.toString('latin1', start, stop)]));
    expect(body.toString('latin1', end)).toBe('payload');
    expect(seen.map(([id, value]) => [id, value])).toEqual([
      [0x01, 1],
      [0x23, 0x1234],
      [0x02, 0xfedc_ba98],
      [0x0b, 200],
      [0x03, 0],
      [0x26, 0],
      [0x26, 0],
    ]);
    expect(seen[4]![2]).toBe('application/json');
  });
});

describe('the packets the broker writes, as mqtt-packet reads them', () => {
  it('PUBLISH at QoS 1: the Message Expiry Interval at level 5, nothing of it at level 4; DUP when sent again', () => {
    const message = { topic: 'scanhub/acme/gateway/g/commands', payload: Buffer.from('{"name":"feedback"}'), packetId: 0x0102, dup: true, messageExpirySeconds: 3599 };
    expect(parsed(publishPacket(message, 5), 5)).toMatchObject({
      cmd: 'publish',
      qos: 1,
      dup: true,
      retain: false,
      topic: message.topic,
      messageId: 0x0102,
      payload: message.payload,
      properties: { messageExpiryInterval: 3599 },
    });
    const v4 = parsed(publishPacket({ ...message, dup: false }, 4), 4);
    expect(v4).toMatchObject({ cmd: 'publish', qos: 1, dup: false, topic: message.topic, messageId: 0x0102, payload: message.payload });
    expect(v4).not.toHaveProperty('properties');
    expect([...publishPacket({ ...message, messageExpirySeconds: undefined }, 5).subarray(2 + 2 + message.topic.length + 2)].slice(0, 1)).toEqual([0]);
  });

  it('SUBACK: one code per filter, after an empty property block at level 5', () => {
    expect(parsed(suback(9, [0x87, 0xa2], 5), 5)).toMatchObject({ cmd: 'suback', messageId: 9, granted: [0x87, 0xa2] });
    expect(parsed(suback(9, [0x80], 4), 4)).toMatchObject({ cmd: 'suback', messageId: 9, granted: [0x80] });
  });
});
