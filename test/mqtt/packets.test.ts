import { describe, expect, it } from 'vitest';
import { MAX_PACKET_BYTES } from '../../src/mqtt/broker.js';
import { PacketReader, ProtocolError, publishPacket, readConnect, readTopicFilters, suback, type PacketRefusal } from '../../src/mqtt/packets.js';
import { remainingLength } from '../helpers/mqtt.js';

// The packet reader of every gateway connection: packet boundaries through chunks of any size,
// the Remaining Length varint, the size limit (a packet over it is refused at its header, its body
// never buffered); and the CONNECT and SUBSCRIBE bodies it reads.

/** A reader that keeps what it hands over as `type:bodyLength`. */
class PacketSizeScanner {
  readonly packets: string[] = [];
  private readonly reader: PacketReader;
  constructor(limit: number) {
    this.reader = new PacketReader(limit, (firstByte, body) => this.packets.push(`${firstByte >> 4}:${body.length}`));
  }
  scan(chunk: Uint8Array): PacketRefusal | undefined {
    return this.reader.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }
}

const PUBLISH = 3;
/** A whole packet: the first byte (type and flags), the Remaining Length, a body of that length. */
const packet = (firstByte: number, bodyLength: number) =>
  Buffer.concat([Buffer.from([firstByte, ...remainingLength(bodyLength)]), Buffer.alloc(bodyLength, 0x61)]);
/** A DISCONNECT whose length asks for a fifth byte: refused as malformed wherever the scanner believes a packet starts. */
const MALFORMED_DISCONNECT = Buffer.from([0xe0, 0xff, 0xff, 0xff, 0xff, 0x01]);
const malformed = (packetType: number): PacketRefusal => ({ reason: 'malformed', packetType });
const oversized = (packetType: number, packetBytes: number): PacketRefusal => ({ reason: 'oversized', packetType, packetBytes });

/** Feeds the chunks in order and returns what each scan answered. */
const scanAll = (scanner: PacketSizeScanner, chunks: Uint8Array[]) => chunks.map((chunk) => scanner.scan(chunk));

/** Feeds `length` bytes of body in pieces of at most 16 MiB, without allocating the whole body. */
function skipBody(scanner: PacketSizeScanner, length: number): (PacketRefusal | undefined)[] {
  const piece = Buffer.alloc(Math.min(length, 16 * 1024 * 1024));
  const answers = [];
  for (let left = length; left > 0; left -= piece.length) answers.push(scanner.scan(piece.subarray(0, Math.min(left, piece.length))));
  return answers;
}

describe('the Remaining Length', () => {
  // [MQTT-2.2.3]: the boundaries of the 1-, 2-, 3- and 4-byte encodings.
  const lengths: [number, number[]][] = [
    [0, [0x00]],
    [127, [0x7f]],
    [128, [0x80, 0x01]],
    [16_383, [0xff, 0x7f]],
    [16_384, [0x80, 0x80, 0x01]],
    [2_097_151, [0xff, 0xff, 0x7f]],
    [2_097_152, [0x80, 0x80, 0x80, 0x01]],
    [268_435_455, [0xff, 0xff, 0xff, 0x7f]],
  ];

  it.each(lengths)('%i: a packet of exactly the limit passes and the next header is found after its body', (length, encoded) => {
    expect(remainingLength(length)).toEqual(encoded);
    const packetBytes = 1 + encoded.length + length;
    const scanner = new PacketSizeScanner(packetBytes);
    expect(scanner.scan(Buffer.from([0x32, ...encoded]))).toBeUndefined();
    // A packet is gathered whole before it is handed over: bodies of hundreds of MB are not fed here.
    if (length > 4 * 1024 * 1024) return;
    expect(skipBody(scanner, length).every((answer) => answer === undefined)).toBe(true);
    expect(scanner.packets).toEqual([`3:${length}`]);
    expect(scanner.scan(MALFORMED_DISCONNECT)).toEqual(malformed(14));
  });

  it.each(lengths.filter(([length]) => length > 0))('%i: one byte over the limit is refused at the header, naming the declared size', (length, encoded) => {
    const packetBytes = 1 + encoded.length + length;
    expect(new PacketSizeScanner(packetBytes - 1).scan(Buffer.from([0x32, ...encoded]))).toEqual(oversized(PUBLISH, packetBytes));
  });

  it('refuses a fourth length byte that asks for a fifth as malformed, at that fourth byte', () => {
    expect(new PacketSizeScanner(Number.MAX_SAFE_INTEGER).scan(Buffer.from([0x30, 0x80, 0x80, 0x80, 0x80, 0x01]))).toEqual(malformed(PUBLISH));
    const scanner = new PacketSizeScanner(Number.MAX_SAFE_INTEGER);
    expect(scanAll(scanner, [[0x30], [0xff, 0xff], [0xff, 0xff]].map((bytes) => Buffer.from(bytes)))).toEqual([undefined, undefined, malformed(PUBLISH)]);
  });

  it('keeps answering the refusal after it, whatever comes next', () => {
    const scanner = new PacketSizeScanner(100);
    expect(scanAll(scanner, [packet(0x30, 98), packet(0x82, 200), packet(0xc0, 0), Buffer.alloc(0)])).toEqual([
      undefined,
      oversized(8, 203),
      oversized(8, 203),
      oversized(8, 203),
    ]);
  });
});

describe('MAX_PACKET_BYTES', () => {
  it('is 256 KiB + 64 KiB: a PUBLISH of exactly 327,680 bytes passes, one of 327,681 is refused', () => {
    expect(MAX_PACKET_BYTES).toBe(327_680);
    // Three length bytes: 1 + 3 + 327,676 = 327,680.
    const header = (body: number) => Buffer.from([0x32, ...remainingLength(body)]);
    const atLimit = new PacketSizeScanner(MAX_PACKET_BYTES);
    expect(atLimit.scan(header(327_676))).toBeUndefined();
    expect(skipBody(atLimit, 327_676)).toEqual([undefined]);
    expect(atLimit.packets).toEqual(['3:327676']);
    expect(atLimit.scan(MALFORMED_DISCONNECT)).toEqual(malformed(14));
    expect(new PacketSizeScanner(MAX_PACKET_BYTES).scan(header(327_677))).toEqual(oversized(PUBLISH, 327_681));
  });
});

describe('packet boundaries across chunks', () => {
  const LIMIT = 30_000;
  // CONNECT, a PUBLISH with a 2-byte length, PINGREQ (no body), a PUBLISH with a 3-byte length,
  // PUBACK, then a PUBLISH header declaring one byte over the limit.
  const stream = Buffer.concat([
    packet(0x10, 40),
    packet(0x32, 200),
    packet(0xc0, 0),
    packet(0x32, 20_000),
    packet(0x40, 2),
    Buffer.from([0x30, ...remainingLength(LIMIT - 3)]),
  ]);
  const refusal = oversized(PUBLISH, LIMIT + 1);

  const packets = ['1:40', '3:200', '12:0', '3:20000', '4:2'];

  it('finds the oversized header after several packets in one chunk, handing over those before it', () => {
    const scanner = new PacketSizeScanner(LIMIT);
    expect(scanner.scan(stream)).toEqual(refusal);
    expect(scanner.packets).toEqual(packets);
  });

  it('finds it with the stream split in two at every byte boundary', () => {
    for (let split = 0; split <= stream.length; split++) {
      const scanner = new PacketSizeScanner(LIMIT);
      const answers = scanAll(scanner, [stream.subarray(0, split), stream.subarray(split)]);
      // Only a chunk that ends the stream holds the header's last byte (or follows it).
      expect(answers, `split at ${split}`).toEqual([split === stream.length ? refusal : undefined, refusal]);
      expect(scanner.packets, `split at ${split}`).toEqual(packets);
    }
  });

  it('finds it fed one byte at a time', () => {
    const scanner = new PacketSizeScanner(LIMIT);
    const answers = scanAll(scanner, [...stream].map((byte) => Buffer.from([byte])));
    expect(answers.slice(0, -1).every((answer) => answer === undefined)).toBe(true);
    expect(answers.at(-1)).toEqual(refusal);
    expect(scanner.packets).toEqual(packets);
  });

  it('finds it with a stream of small packets split in three at every pair of boundaries', () => {
    const small = Buffer.concat([packet(0x10, 12), packet(0x32, 130), packet(0xc0, 0), packet(0x32, 5), Buffer.from([0x30, 0x80, 0x02])]);
    const smallRefusal = oversized(PUBLISH, 3 + 256);
    for (let first = 0; first <= small.length; first++) {
      for (let second = first; second <= small.length; second++) {
        const chunks = [small.subarray(0, first), small.subarray(first, second), small.subarray(second)];
        const scanner = new PacketSizeScanner(255);
        const answers = scanAll(scanner, chunks);
        const ends = [first, second, small.length];
        expect(answers, `splits at ${first}, ${second}`).toEqual(ends.map((end) => (end === small.length ? smallRefusal : undefined)));
        expect(scanner.packets, `splits at ${first}, ${second}`).toEqual(['1:12', '3:130', '12:0', '3:5']);
      }
    }
  });

  it('passes a thousand packets in one chunk and keeps counting after them', () => {
    const many = Buffer.concat([...Array.from({ length: 1000 }, (_, i) => packet(0x32, i % 300)), MALFORMED_DISCONNECT]);
    const scanner = new PacketSizeScanner(400);
    expect(scanner.scan(many)).toEqual(malformed(14));
    expect(scanner.packets).toEqual(Array.from({ length: 1000 }, (_, i) => `3:${i % 300}`));
  });

  it('hands over a packet inside a chunk as a view of that chunk, without copying', () => {
    const chunk = Buffer.concat([packet(0x32, 10), packet(0x32, 3)]);
    const bodies: Buffer[] = [];
    new PacketReader(100, (_first, body) => bodies.push(body)).push(chunk);
    expect(bodies.map((body) => [body.buffer === chunk.buffer, body.byteOffset - chunk.byteOffset, body.length])).toEqual([
      [true, 2, 10],
      [true, 14, 3],
    ]);
  });

  it('reads and refuses nothing more once stopped', () => {
    const seen: string[] = [];
    const reader = new PacketReader(100, (first) => seen.push(String(first >> 4)));
    expect(reader.push(packet(0x32, 1))).toBeUndefined();
    reader.stop();
    expect(reader.push(packet(0xc0, 0))).toBeUndefined();
    expect(reader.push(MALFORMED_DISCONNECT)).toBeUndefined();
    expect(seen).toEqual(['3']);
  });

  it('a sink that stops on a packet gets no later packet of the same chunk, whether that packet came whole or split', () => {
    for (const split of [0, 5]) {
      const seen: string[] = [];
      const reader: PacketReader = new PacketReader(100, (first, body) => {
        seen.push(`${first >> 4}:${body.length}`);
        if (body.length === 7) reader.stop();
      });
      const bytes = Buffer.concat([packet(0x32, 7), packet(0x32, 3), MALFORMED_DISCONNECT]);
      const answers = split ? [reader.push(bytes.subarray(0, split)), reader.push(bytes.subarray(split))] : [reader.push(bytes)];
      expect(answers.every((answer) => answer === undefined)).toBe(true);
      expect(seen).toEqual(['3:7']);
    }
  });
});

/** A CONNECT body: protocol name and level, flags, keep alive, then the payload fields given. */
function connectBody(name: string, level: number, flags: number, keepAlive: number, fields: (string | Buffer)[]): Buffer {
  const string = (value: string | Buffer) => {
    const bytes = typeof value === 'string' ? Buffer.from(value) : value;
    return Buffer.concat([Buffer.from([bytes.length >> 8, bytes.length & 0xff]), bytes]);
  };
  return Buffer.concat([string(name), Buffer.from([level, flags, keepAlive >> 8, keepAlive & 0xff]), ...fields.map(string)]);
}

describe('readConnect', () => {
  it('reads level, clean session, keep alive and the will; client identifier, user name and password are skipped', () => {
    const body = connectBody('MQTT', 4, 0xc2 | 0x04 | 0x08 | 0x20, 60, ['client', 'will/topic', Buffer.from('gone'), 'user', 'secret']);
    expect(readConnect(0x10, body)).toEqual({
      protocolLevel: 4,
      cleanSession: true,
      keepAlive: 60,
      will: { topic: 'will/topic', payload: Buffer.from('gone'), qos: 1, retain: true },
    });
    expect(readConnect(0x10, connectBody('MQIsdp', 3, 0x00, 0, ['']))).toEqual({ protocolLevel: 3, cleanSession: false, keepAlive: 0, will: undefined });
  });

  it('reads an MQTT 5 CONNECT: what its properties ask of the server, an empty client identifier, the will after its properties', () => {
    // Session Expiry 3600, Receive Maximum 20, Maximum Packet Size 2048, a User Property; will properties: Will Delay 5.
    const properties = [20, 0x11, 0, 0, 0x0e, 0x10, 0x21, 0, 20, 0x27, 0, 0, 8, 0, 0x26, 0, 1, 0x6b, 0, 1, 0x76];
    const willProperties = [5, 0x18, 0, 0, 0, 5];
    const body = Buffer.concat([
      connectBody('MQTT', 5, 0x02 | 0x04 | 0x08, 30, []),
      Buffer.from(properties),
      Buffer.from([0, 0]),
      Buffer.from(willProperties),
      Buffer.from([0, 10]),
      Buffer.from('will/topic'),
      Buffer.from([0, 4]),
      Buffer.from('gone'),
    ]);
    expect(readConnect(0x10, body)).toEqual({
      protocolLevel: 5,
      cleanSession: true,
      keepAlive: 30,
      will: { topic: 'will/topic', payload: Buffer.from('gone'), qos: 1, retain: false },
      v5: { sessionExpiry: 3600, receiveMaximum: 20, maximumPacketSize: 2048, emptyClientIdentifier: true },
    });
  });

  it.each([
    ['reserved fixed-header flags', 0x12, connectBody('MQTT', 4, 0x02, 60, ['c']), 'CONNECT with reserved flags set'],
    ['the reserved connect flag', 0x10, connectBody('MQTT', 4, 0x03, 60, ['c']), 'CONNECT with the reserved flag set'],
    ['a will QoS without a will', 0x10, connectBody('MQTT', 4, 0x0a, 60, ['c']), 'CONNECT with inconsistent will flags'],
    ['will QoS 3', 0x10, connectBody('MQTT', 4, 0x1e, 60, ['c', 't', 'm']), 'CONNECT with inconsistent will flags'],
    ['a client identifier past the end', 0x10, connectBody('MQTT', 4, 0x02, 60, []), 'binary data runs past the end of the packet'],
    ['a password flag without the password', 0x10, connectBody('MQTT', 4, 0x42, 60, ['c']), 'binary data runs past the end of the packet'],
    ['another protocol name', 0x10, connectBody('MQTX', 4, 0x02, 60, ['c']), 'protocol name "MQTX"'],
  ])('refuses %s', (_name, firstByte, body, message) => {
    expect(() => readConnect(firstByte, body)).toThrow(new ProtocolError(message));
  });
});

describe('SUBSCRIBE and SUBACK', () => {
  it('reads every filter of a SUBSCRIBE and refuses each in a SUBACK of the same packet identifier', () => {
    const body = Buffer.from([0x12, 0x34, 0, 1, 0x61, 1, 0, 3, 0x62, 0x2f, 0x23, 0]);
    expect(readTopicFilters(body, true)).toEqual(['a', 'b/#']);
    expect([...suback(0x1234, [0x80, 0x80], 4)]).toEqual([0x90, 4, 0x12, 0x34, 0x80, 0x80]);
    expect([...suback(0x1234, [0x87, 0xa2], 5)]).toEqual([0x90, 5, 0x12, 0x34, 0, 0x87, 0xa2]);
  });

  it('writes the Remaining Length of a SUBACK for 200 filters in two bytes', () => {
    const refusing = suback(7, Array<number>(200).fill(0x80), 4);
    expect([...refusing.subarray(0, 5)]).toEqual([0x90, 0xca, 0x01, 0, 7]);
    expect(refusing.length).toBe(205);
    expect(refusing.subarray(5).every((byte) => byte === 0x80)).toBe(true);
  });

  it('writes a SUBACK granting and refusing per filter', () => {
    expect([...suback(9, [1, 0x80, 0], 4)]).toEqual([0x90, 5, 0, 9, 1, 0x80, 0]);
  });

  it('writes a command PUBLISH at QoS 1 with its packet identifier, DUP when asked, and QoS 0 without one', () => {
    const payload = Buffer.from('{"a":1}');
    const read = (packet: Buffer) => {
      const frames: [number, Buffer][] = [];
      new PacketReader(1 << 20, (first, body) => frames.push([first, Buffer.from(body)])).push(packet);
      return frames;
    };
    const [[first, body]] = read(publishPacket({ topic: 'a/b', payload, packetId: 0x0102, dup: false, messageExpirySeconds: 60 }, 4)) as [[number, Buffer]];
    expect(first).toBe(0x32);
    expect([...body.subarray(0, 7)]).toEqual([0, 3, 0x61, 0x2f, 0x62, 1, 2]);
    expect(body.subarray(7).toString()).toBe('{"a":1}');
    // At level 5 the Message Expiry Interval (property 0x02, four bytes) comes before the payload.
    const [[, body5]] = read(publishPacket({ topic: 'a/b', payload, packetId: 0x0102, dup: false, messageExpirySeconds: 60 }, 5)) as [[number, Buffer]];
    expect([...body5.subarray(0, 13)]).toEqual([0, 3, 0x61, 0x2f, 0x62, 1, 2, 5, 0x02, 0, 0, 0, 60]);
    expect(body5.subarray(13).toString()).toBe('{"a":1}');
    expect(read(publishPacket({ topic: 'a/b', payload, packetId: 7, dup: true }, 3))[0]![0]).toBe(0x3a);
    const [[qos0, body0]] = read(publishPacket({ topic: 'a/b', payload, packetId: 0, dup: true }, 4)) as [[number, Buffer]];
    expect([qos0, body0.length]).toEqual([0x30, 5 + payload.length]);
    // A payload over 127 bytes takes a second byte of Remaining Length.
    const big = publishPacket({ topic: 't', payload: Buffer.alloc(300, 0x78), packetId: 1, dup: false }, 4);
    expect(read(big)[0]![1].length).toBe(2 + 1 + 2 + 300);
  });

  it.each([
    ['no filter', Buffer.from([0, 1]), true, 'SUBSCRIBE without a topic filter'],
    ['a requested QoS of 3', Buffer.from([0, 1, 0, 1, 0x61, 3]), true, 'SUBSCRIBE with a bad requested QoS'],
    ['an UNSUBSCRIBE without a filter', Buffer.from([0, 1]), false, 'UNSUBSCRIBE without a topic filter'],
  ])('refuses %s', (_name, body, withQos, message) => {
    expect(() => readTopicFilters(body, withQos)).toThrow(new ProtocolError(message));
  });
});
