import type { TLSSocket } from 'node:tls';
import { PacketReader } from '../../../src/mqtt/packets.js';
import { connectRawTls, mqttString, remainingLength, type TestGateway } from '../../helpers/mqtt.js';

/** A packet as the broker sent it: type, flags of its first byte, body. */
export interface Received {
  type: number;
  flags: number;
  body: Buffer;
}

/** A PUBLISH the broker sent: its topic, packet identifier (0 at QoS 0), DUP flag and JSON payload. */
export interface ReceivedPublish {
  topic: string;
  packetId: number;
  dup: boolean;
  qos: number;
  message: { command_id: string; name: string; parameters: unknown; [field: string]: unknown };
}

/**
 * A gateway speaking MQTT 3.1.1 byte by byte over TLS with its certificate: for what a library
 * hides (DUP flags, packet identifiers, PUBACKs held back, what arrives in which order).
 */
export class RawGateway {
  private readonly queue: Received[] = [];
  private waiter: (() => void) | undefined;
  private closed = false;

  private constructor(readonly socket: TLSSocket) {
    const reader = new PacketReader(1 << 20, (first, body) => {
      this.queue.push({ type: first >> 4, flags: first & 0x0f, body: Buffer.from(body) });
      this.waiter?.();
    });
    socket.on('data', (chunk: Buffer) => reader.push(chunk));
    socket.once('close', () => {
      this.closed = true;
      this.waiter?.();
    });
    socket.resume();
  }

  /** The CONNACK's session present flag ([MQTT-3.2.2-2], MQTT 5 3.2.2.1.1). */
  sessionPresent = false;
  /** The protocol level it connected with: at 5 a SUBSCRIBE carries a property length. */
  level: 4 | 5 = 4;

  /** Connects and reads the CONNACK (return code 0 expected); `clean` is the CONNECT's clean session (Clean Start) flag, `level` 4 (3.1.1) or 5. */
  static async connect(gateway: TestGateway, clean: boolean, level: 4 | 5 = 4): Promise<RawGateway> {
    const raw = new RawGateway(await connectRawTls(gateway));
    const variable = [level, clean ? 0x02 : 0, 0, 60, ...(level === 5 ? [0] : [])];
    const body = Buffer.concat([mqttString('MQTT'), Buffer.from(variable), mqttString(`raw-${gateway.id}`)]);
    raw.socket.write(Buffer.concat([Buffer.from([0x10, ...remainingLength(body.length)]), body]));
    const connack = await raw.next();
    if (connack.type !== 2 || connack.body[1] !== 0) throw new Error(`no CONNACK 0: ${connack.type} ${[...connack.body]}`);
    raw.level = level;
    raw.sessionPresent = (connack.body[0]! & 1) === 1;
    return raw;
  }

  /** The next packet the broker sent. */
  async next(): Promise<Received> {
    while (this.queue.length === 0) {
      if (this.closed) throw new Error('the broker closed the connection');
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
    return this.queue.shift()!;
  }

  /** The next packet, which must be a PUBLISH. */
  async publish(): Promise<ReceivedPublish> {
    const packet = await this.next();
    if (packet.type !== 3) throw new Error(`packet type ${packet.type}, not PUBLISH`);
    const topicEnd = 2 + packet.body.readUInt16BE(0);
    const qos = (packet.flags >> 1) & 3;
    const packetId = qos ? packet.body.readUInt16BE(topicEnd) : 0;
    return {
      topic: packet.body.toString('utf8', 2, topicEnd),
      packetId,
      dup: (packet.flags & 0x08) !== 0,
      qos,
      message: JSON.parse(packet.body.toString('utf8', topicEnd + (qos ? 2 : 0))) as ReceivedPublish['message'],
    };
  }

  /** SUBSCRIBE to these filters at `qos`; resolves with the SUBACK's return codes. */
  async subscribe(filters: string[], qos = 1, packetId = 1): Promise<number[]> {
    const body = Buffer.concat([Buffer.from([packetId >> 8, packetId & 0xff, ...(this.level === 5 ? [0] : [])]), ...filters.map((f) => Buffer.concat([mqttString(f), Buffer.from([qos])]))]);
    this.socket.write(Buffer.concat([Buffer.from([0x82, ...remainingLength(body.length)]), body]));
    const suback = await this.next();
    if (suback.type !== 9) throw new Error(`packet type ${suback.type}, not SUBACK`);
    return [...suback.body.subarray(this.level === 5 ? 3 : 2)];
  }

  puback(packetId: number): void {
    this.socket.write(Buffer.from([0x40, 2, packetId >> 8, packetId & 0xff]));
  }

  /** PINGREQ, and the packets that arrive before its PINGRESP: what the broker had written by then. */
  async before(): Promise<Received[]> {
    this.socket.write(Buffer.from([0xc0, 0]));
    const seen: Received[] = [];
    for (let packet = await this.next(); packet.type !== 13; packet = await this.next()) seen.push(packet);
    return seen;
  }

  /** QoS 1 PUBLISH of a JSON payload to `topic`; resolves with the PUBACK's packet identifier. */
  async send(topic: string, payload: unknown, packetId = 9): Promise<number> {
    const body = Buffer.concat([mqttString(topic), Buffer.from([packetId >> 8, packetId & 0xff]), Buffer.from(JSON.stringify(payload))]);
    this.socket.write(Buffer.concat([Buffer.from([0x32, ...remainingLength(body.length)]), body]));
    const ack = await this.next();
    if (ack.type !== 4) throw new Error(`packet type ${ack.type}, not PUBACK`);
    return ack.body.readUInt16BE(0);
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.destroy();
    });
  }
}
