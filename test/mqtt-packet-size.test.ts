import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { MAX_PACKET_BYTES } from '../src/mqtt/broker.js';
import { limitPacketSize, PacketSizeScanner, type PacketRefusal } from '../src/mqtt/packet-size.js';
import { remainingLength } from './helpers/mqtt.js';

// The header scanner in front of aedes: packet boundaries through chunks of any size, the
// Remaining Length varint, the size limit.

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
    expect(skipBody(scanner, length).every((answer) => answer === undefined)).toBe(true);
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

  it('finds the oversized header after several packets in one chunk', () => {
    expect(new PacketSizeScanner(LIMIT).scan(stream)).toEqual(refusal);
  });

  it('finds it with the stream split in two at every byte boundary', () => {
    for (let split = 0; split <= stream.length; split++) {
      const answers = scanAll(new PacketSizeScanner(LIMIT), [stream.subarray(0, split), stream.subarray(split)]);
      // Only a chunk that ends the stream holds the header's last byte (or follows it).
      expect(answers, `split at ${split}`).toEqual([split === stream.length ? refusal : undefined, refusal]);
    }
  });

  it('finds it fed one byte at a time', () => {
    const answers = scanAll(new PacketSizeScanner(LIMIT), [...stream].map((byte) => Buffer.from([byte])));
    expect(answers.slice(0, -1).every((answer) => answer === undefined)).toBe(true);
    expect(answers.at(-1)).toEqual(refusal);
  });

  it('finds it with a stream of small packets split in three at every pair of boundaries', () => {
    const small = Buffer.concat([packet(0x10, 12), packet(0x32, 130), packet(0xc0, 0), packet(0x32, 5), Buffer.from([0x30, 0x80, 0x02])]);
    const smallRefusal = oversized(PUBLISH, 3 + 256);
    for (let first = 0; first <= small.length; first++) {
      for (let second = first; second <= small.length; second++) {
        const chunks = [small.subarray(0, first), small.subarray(first, second), small.subarray(second)];
        const answers = scanAll(new PacketSizeScanner(255), chunks);
        const ends = [first, second, small.length];
        expect(answers, `splits at ${first}, ${second}`).toEqual(ends.map((end) => (end === small.length ? smallRefusal : undefined)));
      }
    }
  });

  it('passes a thousand packets in one chunk and keeps counting after them', () => {
    const many = Buffer.concat([...Array.from({ length: 1000 }, (_, i) => packet(0x32, i % 300)), MALFORMED_DISCONNECT]);
    expect(new PacketSizeScanner(400).scan(many)).toEqual(malformed(14));
  });
});

describe('limitPacketSize', () => {
  it('sees each chunk inside read(), before the consumer gets it, and reports the refusal once', () => {
    const socket = new PassThrough();
    // Paused mode, read with read() as aedes does (it reads on 'readable').
    socket.pause();
    const seen: string[] = [];
    limitPacketSize(socket, 100, (refusal) => seen.push(`refused ${refusal.packetBytes}`));
    const consume = (bytes: Buffer) => {
      socket.write(bytes);
      seen.push(`consumer read ${(socket.read() as Buffer).length}`);
    };
    consume(packet(0x32, 50));
    consume(Buffer.from([0x32, 0x7f]));
    consume(packet(0x32, 10));
    expect(seen).toEqual(['consumer read 52', 'refused 129', 'consumer read 2', 'consumer read 12']);
  });

  it('refuses a socket that is not read in paused mode (a data listener would make it flow)', () => {
    expect(() => limitPacketSize(new PassThrough(), 100, () => {})).toThrow('limitPacketSize needs a socket read in paused mode (readableFlowing is null)');
  });
});
