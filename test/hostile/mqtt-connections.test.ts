import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MqttClient } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { dbOf } from '../helpers/sqlite.js';
import { ApiClient } from '../../src/client/api.js';
import { sourceOf, type ConnectionLimits } from '../../src/mqtt/admission.js';
import type { BrokerStats } from '../../src/mqtt/broker-stats.js';
import { connectGateway, connectPacket, connectRawTls, mqttString, provisionGateway, readBytes, remainingLength, type TestGateway } from '../helpers/mqtt.js';
import { freePort, spawnServe, stop, type ServeProcess } from '../helpers/serve-process.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, collectedLogs, startTestServer, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

// A hostile client against the MQTT port: sockets that never finish TLS or never send CONNECT,
// floods of them, truncated packets, protocol levels the broker does not speak, packet id 0.

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type LogLine = { msg: string; [field: string]: unknown };

/** startTestServer with deadlines short enough not to cost the test time, and the warnings it logs. */
async function testServer(limits: Partial<ConnectionLimits> = {}): Promise<{ t: TestServer; logs: LogLine[] }> {
  const collected = collectedLogs('warn');
  const t = await startTestServer({ logger: collected.logger, mqttLimits: { handshakeTimeoutMs: 500, connectTimeoutMs: 500, ...limits } });
  cleanups.push(() => t.close());
  return { t, logs: collected.lines };
}

async function connected(gateway: TestGateway, options: Parameters<typeof connectGateway>[1] = {}): Promise<MqttClient> {
  const client = await connectGateway(gateway, options);
  cleanups.push(() => client.endAsync(true).catch(() => {}));
  return client;
}

/** A TCP connection to the MQTT port that sends nothing, from `localAddress`. */
function idleSocket(port: number, localAddress = '127.0.0.1'): Socket {
  const socket = tcpConnect({ host: '127.0.0.1', port, localAddress });
  socket.on('error', () => {});
  cleanups.push(() => void socket.destroy());
  return socket;
}

const closed = (socket: Socket) => new Promise<void>((resolve) => (socket.closed ? resolve() : socket.once('close', () => resolve())));

/** Everything the server sends until it closes the connection. */
function bytesUntilClose(socket: Socket): Promise<number[]> {
  const received: number[] = [];
  socket.on('data', (chunk: Buffer) => received.push(...chunk));
  socket.on('error', () => {});
  socket.resume();
  return closed(socket).then(() => received);
}

/** How many of the process's file descriptors are TCP sockets on the local port (via /proc/net/tcp). */
function socketsOnPort(pid: number, port: number): number {
  const inodes = new Set<string>();
  for (const line of readFileSync(`/proc/${pid}/net/tcp`, 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length > 9 && parseInt(fields[1]!.split(':')[1]!, 16) === port) inodes.add(fields[9]!);
  }
  let count = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (inodes.has(target.slice('socket:['.length, -1))) count++;
    } catch {
      // closed between the listing and the read
    }
  }
  return count;
}

/** Resolves once the server has seen every unauthenticated connection close (its side closes a moment after the client's). */
const forgotten = (t: TestServer) => until(() => t.server.broker.stats.unauthenticated === 0, { what: 'no unauthenticated connection left' });

const eventCount = (t: TestServer) => (dbOf(t.server).prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
const scan = (id: string) => JSON.stringify({ id, type: 'scan', scan_code: 'A-1', created: 1_700_000_000_000 });
const ID = '4c1d2e3f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
const ID_31 = '4c1d2e3f-5a6b-4c7d-8e9f-0a1b2c3d4e60';

/** A CONNECT with the protocol name and level given, otherwise as connectPacket's. */
function connectOfLevel(name: string, level: number, properties = Buffer.alloc(0)): Buffer {
  const body = Buffer.concat([mqttString(name), Buffer.from([level, 0x02, 0, 60]), properties, mqttString('device-7')]);
  return Buffer.concat([Buffer.from([0x10, ...remainingLength(body.length)]), body]);
}

/** A PUBLISH of QoS 1 or 2 with the packet identifier given. */
function publishPacket(topic: string, qos: 1 | 2, packetId: number, payload: string): Buffer {
  const body = Buffer.concat([mqttString(topic), Buffer.from([packetId >> 8, packetId & 0xff]), Buffer.from(payload)]);
  return Buffer.concat([Buffer.from([0x30 | (qos << 1), ...remainingLength(body.length)]), body]);
}

describe('a serve process under 10,000 idle sockets (the default deadlines and caps)', () => {
  it('closes them all within 10 s, refuses what is over the cap at once, returns to its file descriptors, and gateways keep publishing', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-hostile-'));
    const [port, mqttPort] = [await freePort(), await freePort()];
    const serve: ServeProcess = spawnServe(['--data-dir', dataDir, '--port', String(port), '--mqtt-port', String(mqttPort)], {
      SCANHUB_CUSTOMER_ID: CUSTOMER,
      SCANHUB_ADMIN_EMAIL: ADMIN_EMAIL,
      SCANHUB_ADMIN_PASSWORD: ADMIN_PASSWORD,
    });
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    cleanups.push(() => stop(serve));
    await serve.stderrMatches(/scanhub is serving .*\n/);
    const url = `http://127.0.0.1:${port}`;
    const anonymous = new ApiClient(url);
    const { id_token } = await anonymous.post<{ id_token: string }>('/auth/login', { email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    const api = { admin: new ApiClient(url, id_token), anonymous };
    const [publisher, newcomer, late] = [await provisionGateway(api), await provisionGateway(api), await provisionGateway(api)];
    const client = await connected(publisher);
    const openFds = () => readdirSync(`/proc/${serve.child.pid}/fd`).length;
    const mqttFds = () => socketsOnPort(serve.child.pid!, mqttPort);
    const baseline = openFds();
    // The listener and the publisher.
    expect(mqttFds()).toBe(2);

    // The publisher keeps one QoS 1 message in flight from before the flood until after it.
    let acknowledged = 0;
    let flooding = true;
    const publishing = (async () => {
      while (flooding) {
        await client.publishAsync(publisher.topic, JSON.stringify({ type: 'telemetry', device_battery: acknowledged % 100 }), { qos: 1 });
        acknowledged++;
      }
    })();

    // 10,000 sockets from 127.0.0.1 that never send a byte, and 3 from 127.0.0.3 that complete
    // TLS with a gateway's certificate and never send CONNECT.
    const idle = Array.from({ length: 10_000 }, () => idleSocket(mqttPort));
    const silentAfterTls = await Promise.all([0, 1, 2].map(() => connectRawTls(publisher, { localAddress: '127.0.0.3' })));
    const idleClosed = idle.map(closed);
    const tlsClosed = silentAfterTls.map((socket) => closed(socket.on('error', () => {})));
    const ackedAtFloodStart = acknowledged;

    // Once the first is refused, 127.0.0.1 is at its cap of 1,000 unauthenticated connections: a
    // new one from it is refused at once ...
    await Promise.race(idleClosed);
    const refused = idleSocket(mqttPort);
    await closed(refused);
    // ... while a gateway from another address connects, and the one connected before goes on.
    const other = await connected(newcomer, { localAddress: '127.0.0.2' });
    await other.publishAsync(newcomer.topic, scan(ID), { qos: 1 });
    // What serve holds open meanwhile: those within the cap, not 10,000 (+1 for a refusal in progress).
    expect(mqttFds()).toBeLessThanOrEqual(2 + 1_000 + 3 + 1 + 1);

    await Promise.all([...idleClosed, ...tlsClosed]);
    expect(acknowledged).toBeGreaterThan(ackedAtFloodStart);
    // Once the flood is reaped, 127.0.0.1 connects again.
    const again = await connected(late);
    await again.publishAsync(late.topic, JSON.stringify({ type: 'telemetry' }), { qos: 1 });
    flooding = false;
    await publishing;
    await Promise.all([other.endAsync(), again.endAsync()]);

    // HTTP keep-alive connections of the provisioning calls may have closed meanwhile, hence <=.
    await until(() => mqttFds() === 2 && openFds() <= baseline, { what: `the fds of serve back to ${baseline}` });
    await stop(serve);
    const lines = serve
      .stdout()
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as LogLine);
    const named = (msg: string) => lines.filter((line) => line.msg === msg);
    // One line per 10 s per kind, however many refusals: the first says what bit.
    expect(named('MQTT connection refused: this source has too many connections not yet authenticated')[0]).toMatchObject({
      source: '127.0.0.1',
      limit: 1_000,
      unauthenticated: 1_000,
      suppressed: 0,
    });
    expect(named('MQTT connection closed: TLS handshake not completed in time')[0]).toMatchObject({ timeout_ms: 10_000, suppressed: 0 });
    expect(named('MQTT connection closed: no CONNECT answered in time after the TLS handshake')).toEqual([
      expect.objectContaining({ timeout_ms: 10_000, suppressed: 0 }),
    ]);
    const stats = named('MQTT broker closed')[0]!.mqtt as BrokerStats;
    expect(stats).toMatchObject({ unauthenticated: 0, connectTimeouts: 3, connections: 3, handshakesRefused: 0 });
    // Every idle socket was either refused at accept or closed at its deadline. (Most are refused;
    // a socket whose SYN the kernel retried is accepted late and may find room under the cap.)
    expect(stats.connectionsOverCap + stats.handshakeTimeouts).toBe(10_001);
    expect(stats.handshakeTimeouts).toBeGreaterThanOrEqual(1_000);
  }, 120_000);
});

describe('deadlines of unauthenticated connections', () => {
  it('closes a TLS handshake that is not done after handshakeTimeoutMs, though its bytes keep trickling in', async () => {
    const { t, logs } = await testServer();
    const socket = idleSocket(t.server.mqttPort);
    // A TLS record header announcing a 16 KB handshake message, then one byte of it every 50 ms:
    // Node's own handshake timeout restarts at each byte; ours counts from accept.
    socket.write(Buffer.from([0x16, 0x03, 0x01, 0x40, 0x00]));
    const trickle = setInterval(() => socket.write(Buffer.from([0])), 50);
    cleanups.push(() => clearInterval(trickle));
    await closed(socket);
    await forgotten(t);
    expect(t.server.broker.stats).toMatchObject({ handshakeTimeouts: 1, handshakesRefused: 0 });
    expect(logs.filter((line) => line.msg === 'MQTT connection closed: TLS handshake not completed in time')).toEqual([
      expect.objectContaining({ level: 40, remote: '127.0.0.1', timeout_ms: 500, suppressed: 0 }),
    ]);
  });

  it('closes a connection that completes TLS and sends no CONNECT, or only part of one, after connectTimeoutMs', async () => {
    const { t, logs } = await testServer();
    const gateway = await provisionGateway(t);
    const silent = await connectRawTls(gateway);
    const truncated = await connectRawTls(gateway);
    truncated.write(connectPacket('device-7').subarray(0, 10));
    expect(await Promise.all([bytesUntilClose(silent), bytesUntilClose(truncated)])).toEqual([[], []]);
    await forgotten(t);
    expect(t.server.broker.stats).toMatchObject({ connectTimeouts: 2, connections: 0 });
    // Two in one interval: one line, the second suppressed.
    expect(logs.filter((line) => line.msg === 'MQTT connection closed: no CONNECT answered in time after the TLS handshake')).toEqual([
      expect.objectContaining({ level: 40, timeout_ms: 500, suppressed: 0 }),
    ]);
  });

  it('lets a gateway past CONNACK live beyond the deadlines; a truncated PUBLISH then stores nothing and ends at keep alive', async () => {
    const { t } = await testServer();
    const [gateway, other] = [await provisionGateway(t), await provisionGateway(t)];
    const socket = await connectRawTls(gateway);
    // CONNECT 3.1.1 with keep alive 1 s: the broker closes after 1.5 s without a packet ([MQTT-3.1.2-24]).
    const body = Buffer.concat([mqttString('MQTT'), Buffer.from([4, 0x02, 0, 1]), mqttString('device-7')]);
    socket.write(Buffer.concat([Buffer.from([0x10, body.length]), body]));
    expect([...(await readBytes(socket, 4))]).toEqual([0x20, 2, 0, 0]);
    socket.write(publishPacket(gateway.topic, 1, 1, scan(ID)).subarray(0, 40));
    const client = await connected(other);
    await client.publishAsync(other.topic, JSON.stringify({ type: 'telemetry' }), { qos: 1 });
    expect(await bytesUntilClose(socket)).toEqual([]);
    expect(eventCount(t)).toBe(1);
    // Closed by its keep alive, 1.5 s after its last packet: not by the 500 ms CONNECT deadline.
    expect(t.server.broker.stats).toMatchObject({ connectTimeouts: 0, connections: 2, unauthenticated: 0 });
  });
});

describe('caps on unauthenticated connections', () => {
  it('refuses at accept what exceeds the cap per source or in all, logs it, and frees the place at CONNACK or close', async () => {
    const { t, logs } = await testServer({ handshakeTimeoutMs: 20_000, maxUnauthenticatedPerSource: 3, maxUnauthenticated: 5 });
    const port = t.server.mqttPort;
    const stats = t.server.broker.stats;
    const fromOne = [idleSocket(port), idleSocket(port), idleSocket(port)];
    await until(() => stats.unauthenticated === 3, { what: 'three connections admitted' });
    await closed(idleSocket(port));
    expect(stats).toMatchObject({ connectionsOverCap: 1, unauthenticated: 3 });

    const fromTwo = [idleSocket(port, '127.0.0.2'), idleSocket(port, '127.0.0.2')];
    await until(() => stats.unauthenticated === 5, { what: 'five connections admitted' });
    await closed(idleSocket(port, '127.0.0.3'));
    expect(stats).toMatchObject({ connectionsOverCap: 2, unauthenticated: 5 });
    const gateway = await provisionGateway(t);
    await expect(connectGateway(gateway, { localAddress: '127.0.0.4' })).rejects.toThrow();
    expect(stats.connectionsOverCap).toBe(3);

    for (const socket of fromTwo) socket.destroy();
    await until(() => stats.unauthenticated === 3, { what: 'the two closed ones forgotten' });
    const client = await connected(gateway, { localAddress: '127.0.0.4' });
    // Past its CONNACK (once the server saw it written) the gateway no longer counts.
    await until(() => stats.unauthenticated === 3, { what: 'the gateway no longer counted' });
    await client.publishAsync(gateway.topic, scan(ID), { qos: 1 });
    expect(eventCount(t)).toBe(1);
    expect(fromOne.every((socket) => !socket.closed)).toBe(true);

    expect(logs.filter((line) => line.msg.startsWith('MQTT connection refused'))).toEqual([
      expect.objectContaining({ msg: 'MQTT connection refused: this source has too many connections not yet authenticated', source: '127.0.0.1', limit: 3, unauthenticated: 3 }),
      expect.objectContaining({ msg: 'MQTT connection refused: the broker has too many connections not yet authenticated', source: '127.0.0.3', limit: 5, unauthenticated: 5 }),
    ]);
  });

  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['2001:db8:aa:bb:1:2:3:4', '2001:db8:aa:bb::/64'],
    ['2001:DB8:AA:BB::9', '2001:db8:aa:bb::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
  ])('counts %s against the source %s', (address, source) => {
    expect(sourceOf(address)).toBe(source);
  });
});

describe('protocol levels', () => {
  it('answers a CONNECT whose protocol name and level are not MQIsdp/3, MQTT/4 or MQTT/5 with CONNACK 0x01 and closes ([MQTT-3.1.2-2])', async () => {
    const { t, logs } = await testServer();
    const gateway = await provisionGateway(t);
    // The name and level disagree (Mosquitto 2.0 answers each of these `20 02 00 01` too), or the level is unknown.
    const levels = [
      ['MQTT', 3, Buffer.alloc(0)],
      ['MQIsdp', 4, Buffer.alloc(0)],
      ['MQIsdp', 5, Buffer.from([0])], // with MQTT 5's (empty) properties
      ['MQTT', 6, Buffer.from([0])],
      ['MQTT', 99, Buffer.alloc(0)],
      ['MQIsdp', 4 | 0x80, Buffer.alloc(0)], // mosquitto's bridge flag
    ] as const;
    for (const [name, level, properties] of levels) {
      const socket = await connectRawTls(gateway);
      socket.write(connectOfLevel(name, level, properties));
      expect({ name, level, received: await bytesUntilClose(socket) }).toEqual({ name, level, received: [0x20, 0x02, 0x00, 0x01] });
    }
    await forgotten(t);
    expect(t.server.broker.stats).toMatchObject({ protocolLevelsRefused: 6, connections: 0 });
    // Six within 10 s: one line.
    expect(logs.filter((line) => line.msg === 'MQTT CONNECT of an unsupported protocol level refused with CONNACK 0x01, connection closed')).toEqual([
      expect.objectContaining({ level: 40, protocol_level: 3, protocol_name: 'MQTT', certificate_cn: gateway.id, suppressed: 0 }),
    ]);
  });

  it('accepts MQTT 3.1 ("MQIsdp", level 3) like 3.1.1, from raw bytes and from mosquitto_pub -V mqttv31', async () => {
    const { t } = await testServer();
    const gateway = await provisionGateway(t);
    const socket = await connectRawTls(gateway);
    socket.write(connectOfLevel('MQIsdp', 3));
    expect([...(await readBytes(socket, 4))]).toEqual([0x20, 2, 0, 0]);
    socket.write(publishPacket(gateway.topic, 1, 0x0102, scan(ID)));
    expect([...(await readBytes(socket, 4))]).toEqual([0x40, 2, 0x01, 0x02]);
    socket.end();

    // The PEM files openssl extracts from the PKCS#12, as docs/gateways-mqtt.md shows.
    const dir = mkdtempSync(join(tmpdir(), 'scanhub-mqttv31-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'gateway.p12'), gateway.pkcs12);
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    openssl('pkcs12', '-in', 'gateway.p12', '-passin', 'pass:', '-nokeys', '-clcerts', '-out', 'gateway.crt');
    openssl('pkcs12', '-in', 'gateway.p12', '-passin', 'pass:', '-nokeys', '-cacerts', '-out', 'ca.crt');
    openssl('pkcs12', '-in', 'gateway.p12', '-passin', 'pass:', '-nocerts', '-nodes', '-out', 'gateway.key');
    const mosquittoPub = (...args: string[]) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn('mosquitto_pub', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('exit', (code) => resolve({ code, stderr }));
      });
    const answer = await mosquittoPub(
      ...['-h', 'localhost', '-p', String(t.server.mqttPort), '--cafile', 'ca.crt', '--cert', 'gateway.crt', '--key', 'gateway.key'],
      ...['-V', 'mqttv31', '-q', '1', '-t', gateway.topic, '-m', scan(ID_31)],
    );
    expect(answer).toEqual({ code: 0, stderr: '' });
    expect(dbOf(t.server).prepare('SELECT id, gateway_id FROM events ORDER BY seq').all()).toEqual([
      { id: ID, gateway_id: gateway.id },
      { id: ID_31, gateway_id: gateway.id },
    ]);
    expect(t.server.broker.stats).toMatchObject({ connections: 2, protocolLevelsRefused: 0 });
  });
});

describe('packet identifier 0', () => {
  it('closes the connection at a QoS 1 or 2 PUBLISH with packet identifier 0: no acknowledgement, nothing stored ([MQTT-2.3.1-1])', async () => {
    const { t, logs } = await testServer();
    const gateway = await provisionGateway(t);
    for (const qos of [1, 2] as const) {
      const socket = await connectRawTls(gateway);
      socket.write(connectPacket('device-7'));
      expect([...(await readBytes(socket, 4))]).toEqual([0x20, 2, 0, 0]);
      socket.write(publishPacket(gateway.topic, qos, 0, scan(ID)));
      expect({ qos, received: await bytesUntilClose(socket) }).toEqual({ qos, received: [] });
    }
    expect(eventCount(t)).toBe(0);
    expect(t.server.broker.stats).toMatchObject({ protocolViolations: 2, publishesRefused: 0 });
    expect(logs.filter((line) => line.msg === 'MQTT protocol violation: PUBLISH with packet identifier 0, connection closed')).toEqual([
      expect.objectContaining({ level: 40, gateway_id: gateway.id, qos: 1 }),
      expect.objectContaining({ level: 40, gateway_id: gateway.id, qos: 2 }),
    ]);
  });
});
