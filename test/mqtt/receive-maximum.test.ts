import { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { expect, it } from 'vitest';
import { GatewayConnection } from '../../src/mqtt/gateway-connection.js';
import type { ConnectionHost } from '../../src/mqtt/gateway-session.js';
import { connectPacket5, publishPacket5 } from '../helpers/mqtt.js';

// MQTT 5's Receive Maximum (MQTT 5 3.2.2.3.3, 3.3.4): the CONNACK says how many QoS 1 messages a
// gateway may have unacknowledged; one more is refused with DISCONNECT 0x93. Messages are only
// acknowledged once committed, so the test holds every commit back: a GatewayConnection over an
// in-memory socket, with a writer that never answers. (Over TLS the backpressure at 4,096 waiting
// messages stops reading first unless the next PUBLISH arrives in the same chunk.)

const TOPIC = 'scanhub/acme/gateway/g-1';

/** A socket of the shape GatewayConnection reads: what the broker writes is kept in `written`. */
class MemorySocket extends Duplex {
  readonly written: Buffer[] = [];
  override _read(): void {}
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.written.push(chunk);
    done();
  }
  getPeerCertificate() {
    return { subject: { CN: 'g-1' }, serialNumber: '01' };
  }
}

it('refuses the 4,097th unacknowledged QoS 1 PUBLISH with DISCONNECT 0x93 "receive maximum exceeded", after CONNACK said 4,096', async () => {
  const socket = new MemorySocket();
  let submitted = 0;
  const host = {
    log: { info: () => {}, warn: () => {}, error: () => {} },
    writer: { submit: () => void submitted++ },
    maxPayloadBytes: 262_144,
    authenticate: () => Promise.resolve({ gatewayId: 'g-1', topic: TOPIC, topicBytes: Buffer.from(TOPIC), serial: '01' }),
    connected: () => {},
    disconnected: () => {},
    publishRefused: () => {},
    protocolViolation: () => {},
    packetRefused: () => {},
    subscriptionRefused: () => {},
  } as unknown as ConnectionHost<GatewayConnection>;
  new GatewayConnection(socket as unknown as TLSSocket, host, 327_680);
  socket.emit('data', connectPacket5());
  await new Promise((resolve) => setImmediate(resolve));
  const connack = Buffer.concat(socket.written);
  // Receive Maximum (0x21) 4,096 is the CONNACK's first property.
  expect([...connack.subarray(5, 8)]).toEqual([0x21, 0x10, 0x00]);

  const publishes = Array.from({ length: 4097 }, (_, i) => publishPacket5(TOPIC, '{}', { packetId: i + 1 }));
  socket.emit('data', Buffer.concat(publishes));
  await new Promise((resolve) => socket.once('finish', resolve));
  expect(submitted).toBe(4096);
  expect([...Buffer.concat(socket.written).subarray(connack.length)]).toEqual([0xe0, 1, 0x93]);
});
