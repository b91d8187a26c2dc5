import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import mqtt, { type MqttClient } from 'mqtt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { countRows, selectColumn, selectRows } from '../helpers/store-rows.js';
import { issueClientCertificate, loadOrCreateCa, randomSerialHex } from '../../src/pki/ca.js';
import { EVENT_COLUMNS } from '../../src/domain/events.js';
import { FileSecrets } from '../../src/store/sqlite/secrets.js';
import { closedAt, connectGateway, connectPacket, connectRawTls, mqttString, provisionGateway, readBytes, remainingLength, type TestGateway, GatewayClients } from '../helpers/mqtt.js';
import { CUSTOMER, collectedLogs, startTestServer, type TestServer } from '../helpers/server.js';

// The broker as a gateway meets it: TLS with the certificate the service issued, real sockets.

let t: TestServer;
let logs: { msg: string; [field: string]: unknown }[];
const clients = new GatewayClients();
beforeEach(async () => {
  const collected = collectedLogs('warn');
  logs = collected.lines;
  t = await startTestServer({ logger: collected.logger });
});
afterEach(async () => {
  await clients.endAll();
  await t.close();
});

const connect = (gateway: TestGateway, options: Parameters<typeof connectGateway>[1] = {}) => clients.connect(gateway, options);

const eventCount = () => countRows(t, 'events');
const scan = (id: string, extra: Record<string, unknown> = {}) => JSON.stringify({ id, type: 'scan', scan_code: 'A-1', created: 1_700_000_000_000, ...extra });
const ID = ['0b7e3a52-5f0e-4a7d-9c61-3b1f2d4e5a01', '0b7e3a52-5f0e-4a7d-9c61-3b1f2d4e5a02', '0b7e3a52-5f0e-4a7d-9c61-3b1f2d4e5a03'];

/** How a connection attempt ends: 'connected', the error it raised, or 'closed' without a word. */
function attempt(options: mqtt.IClientOptions): Promise<string> {
  const client = mqtt.connect(`mqtts://localhost:${t.server.mqttPort}`, { reconnectPeriod: 0, connectTimeout: 5000, ...options });
  return new Promise<string>((resolve) => {
    client.once('connect', () => resolve('connected'));
    client.once('error', (error) => resolve(error.message));
    client.once('close', () => resolve('closed'));
  }).finally(() => client.end(true));
}

/** Publishes QoS 1 and resolves with whether a PUBACK came before the connection closed. */
function publishUnlessClosed(client: MqttClient, topic: string, payload: string | Buffer): Promise<'acknowledged' | 'closed'> {
  return new Promise((resolve) => {
    client.once('close', () => resolve('closed'));
    client.publish(topic, payload, { qos: 1 }, (error) => !error && resolve('acknowledged'));
  });
}

describe('publishing', () => {
  it('stores the event of a QoS 1 PUBLISH, with the gateway fields, before the PUBACK', async () => {
    const gateway = await provisionGateway(t, { usecase: 'inbound', station: 'dock-4' });
    const client = await connect(gateway);
    await client.publishAsync(
      gateway.topic,
      JSON.stringify({
        id: ID[0],
        class: 'event',
        type: 'scan',
        created: 1_700_000_000_123,
        scan_code: '4006381333931',
        scan_duration: 142,
        scan_decode_symbology: 'EAN-13',
        device_id: 'scanner-7',
        device_battery: 87,
        device_firmware: '2.4.1',
        device_temperature: 31.5,
        metrics_worker_steps: 1200,
        gateway_id: 'forged',
      }),
      { qos: 1 },
    );
    // The PUBACK has arrived: the row must already be committed.
    expect((await selectRows(t.server, `SELECT customer_id, ${EVENT_COLUMNS.join(', ')} FROM events WHERE id = ?`, ID[0]))[0]).toEqual({
      id: ID[0],
      customer_id: CUSTOMER,
      class: 'event',
      type: 'scan',
      created: 1_700_000_000_123,
      scan_code: '4006381333931',
      scan_duration: 142,
      scan_decode_symbology: 'EAN-13',
      device_id: 'scanner-7',
      device_battery: 87,
      device_firmware: '2.4.1',
      device_temperature: 31.5,
      gateway_id: gateway.id,
      gateway_usecase: 'inbound',
      gateway_station: 'dock-4',
      metrics_worker_steps: 1200,
    });
    expect(t.server.broker.ingest).toMatchObject({ messages: 1, events: 1, duplicates: 0, invalid: 0, failed: 0 });
    const api = await t.admin.get<{ connectivity_status: string }>(`/${CUSTOMER}/gateways/${gateway.id}`);
    expect(api.connectivity_status).toBe('ACTIVE');
  });

  it('stores a repeated event id once (QoS 1 redelivery) and counts the duplicate', async () => {
    const gateway = await provisionGateway(t);
    const client = await connect(gateway);
    await client.publishAsync(gateway.topic, scan(ID[0]), { qos: 1 });
    await client.publishAsync(gateway.topic, scan(ID[0], { scan_code: 'changed' }), { qos: 1 });
    await client.publishAsync(gateway.topic, JSON.stringify([JSON.parse(scan(ID[0])), JSON.parse(scan(ID[1]))]), { qos: 1 });
    expect((await selectRows(t.server, 'SELECT id, scan_code FROM events ORDER BY id'))).toEqual([
      { id: ID[0], scan_code: 'A-1' },
      { id: ID[1], scan_code: 'A-1' },
    ]);
    expect(t.server.broker.ingest).toMatchObject({ messages: 3, events: 2, duplicates: 2 });
  });

  it('stores nothing published to another gateway’s topic, and closes that connection', async () => {
    const [gateway, other] = [await provisionGateway(t), await provisionGateway(t)];
    const client = await connect(gateway);
    // [MQTT-3.3.5-2]: the broker may not acknowledge an unauthorized PUBLISH; it closes instead.
    expect(await publishUnlessClosed(client, other.topic, scan(ID[0]))).toBe('closed');
    const again = await connect(gateway);
    expect(await publishUnlessClosed(again, `scanhub/other-customer/gateway/${gateway.id}`, scan(ID[1]))).toBe('closed');
    expect((await eventCount())).toBe(0);
    expect(t.server.broker.stats.publishesRefused).toBe(2);
  });

  it('refuses a payload over 256 KiB (closing the connection) and stores one of exactly 256 KiB', async () => {
    const gateway = await provisionGateway(t);
    const client = await connect(gateway);
    // Padded in a field the spec does not define (ignored): a scan_code is limited to 8192 characters.
    const exactly = (size: number) => {
      const body = scan(ID[0], { padding: '' });
      return body.replace('"padding":""', `"padding":"${'x'.repeat(size - body.length)}"`);
    };
    expect(Buffer.byteLength(exactly(256 * 1024))).toBe(262_144);
    expect(await publishUnlessClosed(client, gateway.topic, exactly(256 * 1024 + 1))).toBe('closed');
    expect((await eventCount())).toBe(0);
    const again = await connect(gateway);
    expect(await publishUnlessClosed(again, gateway.topic, exactly(256 * 1024))).toBe('acknowledged');
    expect((await eventCount())).toBe(1);
  });

  it('closes a connection at a PUBLISH header declaring 10 MB, without waiting for the body, and serves other gateways', async () => {
    const [gateway, other] = [await provisionGateway(t), await provisionGateway(t)];
    const socket = await connectRawTls(gateway);
    socket.write(connectPacket('raw-device'));
    expect([...(await readBytes(socket, 4))]).toEqual([0x20, 2, 0, 0]);
    // Read on, so that the server's FIN ends the socket (a reset would end it too).
    socket.on('error', () => {}).resume();
    const socketClosed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // QoS 1 PUBLISH declaring 10 MiB of Remaining Length, then the topic, packet id and a few
    // payload bytes, and nothing more: only the header can have closed the connection.
    const header = Buffer.from([0x32, ...remainingLength(10 * 1024 * 1024)]);
    socket.write(Buffer.concat([header, mqttString(gateway.topic), Buffer.from([0, 1]), Buffer.from('{"id":"')]));
    await socketClosed;
    expect(t.server.broker.stats.publishesRefused).toBe(1);
    const refusals = logs.filter((line) => line.msg === 'MQTT packet over the size limit refused, connection closed');
    expect(refusals).toEqual([expect.objectContaining({ level: 40, gateway_id: gateway.id, packet_type: 3, declared_bytes: 1 + 4 + 10 * 1024 * 1024, limit_bytes: 327_680 })]);
    expect(refusals[0]).not.toHaveProperty('certificate_cn');

    const client = await connect(other);
    await client.publishAsync(other.topic, scan(ID[0]), { qos: 1 });
    expect((await selectRows(t.server, 'SELECT id, gateway_id FROM events'))).toEqual([{ id: ID[0], gateway_id: other.id }]);
  });

  it('closes a connection at a Remaining Length of five bytes (malformed), not counted as a refused publish', async () => {
    const gateway = await provisionGateway(t);
    const socket = await connectRawTls(gateway);
    socket.write(connectPacket('raw-device'));
    expect([...(await readBytes(socket, 4))]).toEqual([0x20, 2, 0, 0]);
    socket.on('error', () => {}).resume();
    const socketClosed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(Buffer.from([0x32, 0xff, 0xff, 0xff, 0xff, 0x01]));
    await socketClosed;
    expect(t.server.broker.stats.publishesRefused).toBe(0);
    expect(logs.filter((line) => line.msg === 'MQTT packet with a malformed Remaining Length, connection closed')).toEqual([
      expect.objectContaining({ level: 40, gateway_id: gateway.id, packet_type: 3 }),
    ]);
    const client = await connect(gateway);
    await client.publishAsync(gateway.topic, scan(ID[0]), { qos: 1 });
    expect((await eventCount())).toBe(1);
  });

  it('answers a SUBSCRIBE with failure 0x80 and keeps the connection', async () => {
    const gateway = await provisionGateway(t);
    const client = await connect(gateway);
    // mqtt.js turns a SUBACK with failure codes into an error that carries the packet.
    await expect(client.subscribeAsync([gateway.topic, '#'], { qos: 1 })).rejects.toMatchObject({
      packet: { cmd: 'suback', granted: [128, 128] },
    });
    await client.publishAsync(gateway.topic, scan(ID[0]), { qos: 1 });
    expect((await eventCount())).toBe(1);
    expect(t.server.broker.stats.subscriptionsRefused).toBe(2);
  });
});

describe('connecting', () => {
  for (const maxVersion of ['TLSv1.3', 'TLSv1.2'] as const) {
    it(`offers no TLS session resumption (${maxVersion}): a client that saved the session of its last connection makes a full handshake`, async () => {
      const gateway = await provisionGateway(t);
      const { port } = new URL(gateway.endpoint);
      const handshake = async (session?: Buffer) => {
        const socket = tlsConnect({ host: '127.0.0.1', port: Number(port), servername: 'localhost', pfx: gateway.pkcs12, passphrase: '', maxVersion, session });
        const sessions: Buffer[] = [];
        socket.on('session', (saved: Buffer) => sessions.push(saved));
        await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
        socket.write(connectPacket(gateway.id));
        // The session messages come before the CONNACK.
        expect(await readBytes(socket, 4)).toEqual(Buffer.from([0x20, 0x02, 0x00, 0x00]));
        const reused = socket.isSessionReused();
        const protocol = socket.getProtocol();
        socket.destroy();
        return { reused, protocol, sessions };
      };
      const first = await handshake();
      expect({ reused: first.reused, protocol: first.protocol }).toEqual({ reused: false, protocol: maxVersion });
      expect(first.sessions.length).toBeGreaterThan(0);
      const second = await handshake(first.sessions.at(-1));
      expect(second.reused).toBe(false);
    });
  }

  it('answers 60 gateways connecting at once: every one CONNACK 0, every PUBLISH acknowledged and stored', async () => {
    const gateways = await Promise.all(Array.from({ length: 60 }, () => provisionGateway(t)));
    const sockets = await Promise.all(gateways.map((gateway) => connectRawTls(gateway)));
    try {
      const connacks = await Promise.all(sockets.map((socket, i) => (socket.write(connectPacket(gateways[i]!.id)), readBytes(socket, 4))));
      expect(connacks.map((bytes) => bytes.toString('hex'))).toEqual(Array(60).fill('20020000'));
      const pubacks = await Promise.all(
        sockets.map((socket, i) => {
          const topic = mqttString(gateways[i]!.topic);
          const payload = Buffer.from(scan(`0b7e3a52-5f0e-4a7d-9c61-${String(i).padStart(12, '0')}`));
          const body = Buffer.concat([topic, Buffer.from([0, i + 1]), payload]);
          socket.write(Buffer.concat([Buffer.from([0x32, ...remainingLength(body.length)]), body]));
          return readBytes(socket, 4);
        }),
      );
      expect(pubacks.map((bytes) => bytes.toString('hex'))).toEqual(Array.from({ length: 60 }, (_, i) => `400200${(i + 1).toString(16).padStart(2, '0')}`));
      expect(await eventCount()).toBe(60);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  it('refuses TLS 1.2 renegotiation: the connection closes instead', async () => {
    const gateway = await provisionGateway(t);
    const { port } = new URL(gateway.endpoint);
    const socket = tlsConnect({ host: '127.0.0.1', port: Number(port), servername: 'localhost', pfx: gateway.pkcs12, passphrase: '', maxVersion: 'TLSv1.2' });
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('secureConnect', resolve));
    socket.write(connectPacket(gateway.id));
    expect(await readBytes(socket, 4)).toEqual(Buffer.from([0x20, 0x02, 0x00, 0x00]));
    const outcome = await new Promise<string>((resolve) => {
      socket.once('close', () => resolve('closed'));
      socket.renegotiate({}, (error) => resolve(error ? `refused: ${error.message}` : 'renegotiated'));
      socket.resume();
    });
    expect(outcome).toBe('closed');
  });

  it('refuses a client without a certificate in the TLS handshake', async () => {
    const ca = Buffer.from(t.server.ctx.ca.certPem);
    // TLS 1.3: the server's "certificate required" alert reaches the client as the error.
    expect(await attempt({ ca })).toMatch(/alert certificate required/);
    expect(t.server.broker.stats).toMatchObject({ handshakesRefused: 1, connections: 0 });
  });

  it('refuses a certificate of another CA, even with the CN of a real gateway', async () => {
    const gateway = await provisionGateway(t);
    const otherDir = mkdtempSync(join(tmpdir(), 'scanhub-other-ca-'));
    try {
      const otherCa = await loadOrCreateCa(new FileSecrets(otherDir));
      const forged = issueClientCertificate(otherCa, gateway.id, randomSerialHex());
      const ca = Buffer.from(t.server.ctx.ca.certPem);
      // Node verifies the chain after the handshake and closes the socket without an alert.
      expect(await attempt({ ca, key: forged.keyPem, cert: forged.certPem })).toBe('closed');
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }
    expect(t.server.broker.stats).toMatchObject({ handshakesRefused: 1, connections: 0 });
  });

  it('refuses a deleted gateway’s certificate with CONNACK "not authorized"', async () => {
    const gateway = await provisionGateway(t);
    await t.admin.delete(`/${CUSTOMER}/gateways/${gateway.id}`);
    await expect(connectGateway(gateway)).rejects.toMatchObject({ code: 5 });
    expect(t.server.broker.stats).toMatchObject({ connectsRefused: 1, connections: 0 });
  });

  it('disconnects a connected gateway when it is deleted, and refuses it when it comes back', async () => {
    const collected = logs;
    const gateway = await provisionGateway(t);
    const client = await connect(gateway);
    await client.publishAsync(gateway.topic, scan(ID[0]), { qos: 1 });
    const disconnected = closedAt(client);
    await t.admin.delete(`/${CUSTOMER}/gateways/${gateway.id}`);
    // No message needed: the deletion's signal closes the connection.
    await disconnected;
    await expect(connectGateway(gateway)).rejects.toMatchObject({ code: 5 });
    expect(await eventCount()).toBe(1);
    expect(t.server.broker.stats).toMatchObject({ connections: 1, connectsRefused: 1 });
    expect(collected.filter((line) => line.msg === 'MQTT connect refused: unknown or deleted gateway')).toHaveLength(1);
  });

  it('fails the start of a second server on a taken MQTT port, naming it', async () => {
    await expect(startTestServer({ mqttPort: t.server.mqttPort })).rejects.toThrow(
      `cannot start the MQTT broker on 127.0.0.1:${t.server.mqttPort}: listen EADDRINUSE: address already in use 127.0.0.1:${t.server.mqttPort}`,
    );
  });

  it('identifies the session by the certificate: a second connection of a gateway takes over, another gateway cannot', async () => {
    const [gateway, other] = [await provisionGateway(t), await provisionGateway(t)];
    const first = await connect(gateway, { clientId: 'scanner-gateway' });
    const firstClosed = closedAt(first);
    // Same client identifier, other certificate: a separate session, the first stays connected.
    const stranger = await connect(other, { clientId: 'scanner-gateway' });
    await stranger.publishAsync(other.topic, scan(ID[0]), { qos: 1 });
    await first.publishAsync(gateway.topic, scan(ID[1]), { qos: 1 });
    // [MQTT-3.1.4-2]: the same gateway again replaces its own earlier connection.
    const second = await connect(gateway, { clientId: 'anything' });
    await firstClosed;
    await second.publishAsync(gateway.topic, scan(ID[2]), { qos: 1 });
    expect((await selectColumn(t.server, 'SELECT gateway_id FROM events ORDER BY id'))).toEqual([other.id, gateway.id, gateway.id]);
  });
});
