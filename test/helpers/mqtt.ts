import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isIP, type TcpNetConnectOpts } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { CUSTOMER, type TestServer } from './server.js';

/** What POST /provisioning answers (spec 4.2). */
export interface Provisioned {
  mqtt_endpoint: string;
  mqtt_topic_prefix: string;
  certificate_common_name: string;
  gateway: { id: string; name: string; usecase: string; station: string };
  pkcs12: string;
}

/** A gateway provisioned through the API: its id, topic and the PKCS#12 the service issued. */
export interface TestGateway {
  id: string;
  topic: string;
  endpoint: string;
  pkcs12: Buffer;
}

/** Creates a gateway, prepares provisioning and redeems the token, as a technician and device would. */
export async function provisionGateway(
  t: Pick<TestServer, 'admin' | 'anonymous'>,
  fields: { name?: string; usecase?: string; station?: string } = {},
): Promise<TestGateway> {
  const gateway = await t.admin.post<{ id: string }>(`/${CUSTOMER}/gateways`, {
    name: fields.name ?? `gw-${randomUUID().slice(0, 8)}`,
    usecase: fields.usecase ?? 'picking',
    station: fields.station ?? 'station-1',
  });
  const preparation = await t.admin.post<{ registration_path: string; token: string }>(
    `/${CUSTOMER}/gateways/${gateway.id}/prepare-provisioning`,
  );
  return provisionedGateway(await t.anonymous.post<Provisioned>(preparation.registration_path, { token: preparation.token }));
}

/** What the device holds after POST /provisioning answered. */
export function provisionedGateway(provisioned: Provisioned): TestGateway {
  return {
    id: provisioned.gateway.id,
    topic: `${provisioned.mqtt_topic_prefix}/gateway/${provisioned.gateway.id}`,
    endpoint: provisioned.mqtt_endpoint,
    pkcs12: Buffer.from(provisioned.pkcs12, 'base64'),
  };
}

/** Connects with the gateway's PKCS#12 (which also holds the CA that signed the broker); no reconnects. */
export function connectGateway(gateway: TestGateway, options: IClientOptions & Pick<TcpNetConnectOpts, 'localAddress'> = {}): Promise<MqttClient> {
  // mqtt.js hands these to tls.connect; its option type does not name them.
  const tls: Pick<ConnectionOptions, 'pfx' | 'passphrase'> = { pfx: gateway.pkcs12, passphrase: '' };
  return mqtt.connectAsync(gateway.endpoint, {
    ...tls,
    protocolVersion: 4,
    reconnectPeriod: 0,
    connectTimeout: 5000,
    ...options,
  });
}

/** MQTT's Remaining Length encoding ([MQTT-2.2.3]): 7 bits per byte, least significant first. */
export function remainingLength(value: number): number[] {
  const bytes: number[] = [];
  do {
    const low = value % 0x80;
    value = Math.floor(value / 0x80);
    bytes.push(value > 0 ? low | 0x80 : low);
  } while (value > 0);
  return bytes;
}

/** The MQTT 3.1.1 string encoding: two length bytes, then UTF-8. */
export const mqttString = (text: string) => {
  const bytes = Buffer.from(text);
  return Buffer.concat([Buffer.from([bytes.length >> 8, bytes.length & 0xff]), bytes]);
};

/** A CONNECT of MQTT 3.1.1 (level 4), clean session, keep alive 60, with the client identifier. */
export function connectPacket(clientId: string): Buffer {
  const body = Buffer.concat([mqttString('MQTT'), Buffer.from([4, 0x02, 0, 60]), mqttString(clientId)]);
  return Buffer.concat([Buffer.from([0x10, ...remainingLength(body.length)]), body]);
}

/** A TLS connection to the broker with the gateway's PKCS#12 and nothing else: MQTT bytes are the test's to write. */
export async function connectRawTls(gateway: TestGateway, options: Pick<TcpNetConnectOpts, 'localAddress'> = {}): Promise<TLSSocket> {
  const { hostname, port } = new URL(gateway.endpoint);
  // SNI takes host names only (RFC 6066): a serve process's endpoint may be an address.
  const servername = isIP(hostname) ? undefined : hostname;
  const socket = tlsConnect({ host: '127.0.0.1', port: Number(port), servername, pfx: gateway.pkcs12, passphrase: '', ...options });
  await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
  socket.pause();
  return socket;
}

/** Reads exactly `length` bytes from a paused socket, then pauses it again. */
export function readBytes(socket: TLSSocket, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= length) {
        socket.off('data', onData);
        socket.pause();
        resolve(received.subarray(0, length));
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.resume();
  });
}

/** Resolves once the broker has handed `count` messages to ingest (no event says so: checks each turn, for at most 5 s). */
export async function messagesSubmitted(t: TestServer, count: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (t.server.broker.ingest.messages < count) {
    if (Date.now() > deadline) throw new Error(`the broker received ${t.server.broker.ingest.messages} messages, not ${count}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Resolves with the time (Date.now()) the client's connection closed. */
export const closedAt = (client: MqttClient) => new Promise<number>((resolve) => client.once('close', () => resolve(Date.now())));

/** The gateway's endpoint on instance `t` of a deployment (each instance listens on its own MQTT port). */
export const atInstance = (t: TestServer, gateway: TestGateway): TestGateway => ({ ...gateway, endpoint: `mqtts://localhost:${t.server.mqttPort}` });

/** The gateway connections a test opens, every one ended by `endAll()` (in afterEach). */
export class GatewayClients {
  private readonly clients: MqttClient[] = [];

  constructor(private readonly defaults: Parameters<typeof connectGateway>[1] = {}) {}

  async connect(gateway: TestGateway, options: Parameters<typeof connectGateway>[1] = {}): Promise<MqttClient> {
    const client = await connectGateway(gateway, { ...this.defaults, ...options });
    this.clients.push(client);
    return client;
  }

  async endAll(): Promise<void> {
    await Promise.all(this.clients.splice(0).map((client) => client.endAsync(true)));
  }
}

/** An MQTT packet of the first byte given around `body` ([MQTT-2.2]). */
export const mqttPacket = (firstByte: number, body: Buffer) => Buffer.concat([Buffer.from([firstByte, ...remainingLength(body.length)]), body]);

/** A CONNECT of MQTT 5 (level 5): its properties as bytes after their length, clean start, keep alive 60 unless told. */
export function connectPacket5(
  options: { properties?: number[]; clientId?: string; keepAlive?: number; will?: { topic: string; payload: string; qos?: number; retain?: boolean; properties?: number[] } } = {},
): Buffer {
  const { properties = [], clientId = 'device-5', keepAlive = 60, will } = options;
  const flags = 0x02 | (will ? 0x04 | ((will.qos ?? 0) << 3) | (will.retain ? 0x20 : 0) : 0);
  const fields = [mqttString('MQTT'), Buffer.from([5, flags, keepAlive >> 8, keepAlive & 0xff, ...remainingLength(properties.length), ...properties]), mqttString(clientId)];
  if (will) {
    const willProperties = will.properties ?? [];
    fields.push(Buffer.from([...remainingLength(willProperties.length), ...willProperties]), mqttString(will.topic), mqttString(will.payload));
  }
  return mqttPacket(0x10, Buffer.concat(fields));
}

/** A PUBLISH of MQTT 5: QoS and flags in `firstByte`'s low nibble, the packet identifier when QoS > 0, the property bytes given. */
export function publishPacket5(topic: string, payload: string, options: { qos?: number; packetId?: number; properties?: number[]; flags?: number } = {}): Buffer {
  const { qos = 1, packetId = 1, properties = [], flags = 0 } = options;
  const id = qos > 0 ? Buffer.from([packetId >> 8, packetId & 0xff]) : Buffer.alloc(0);
  return mqttPacket(0x30 | (qos << 1) | flags, Buffer.concat([mqttString(topic), id, Buffer.from([...remainingLength(properties.length), ...properties]), Buffer.from(payload)]));
}

/** Everything the server sends on a raw connection until it closes it. */
export function bytesUntilClose(socket: TLSSocket): Promise<number[]> {
  const received: number[] = [];
  socket.on('data', (chunk: Buffer) => received.push(...chunk));
  socket.on('error', () => {});
  socket.resume();
  return new Promise((resolve) => (socket.closed ? resolve(received) : socket.once('close', () => resolve(received))));
}

/**
 * Writes the PEM files `openssl pkcs12` extracts from the gateway's PKCS#12 into `dir`, as
 * docs/gateways-mqtt.md shows for stock clients: gateway.crt, gateway.key and ca.crt.
 */
export function extractPemFiles(gateway: TestGateway, dir: string): void {
  writeFileSync(join(dir, 'gateway.p12'), gateway.pkcs12);
  const openssl = (...args: string[]) => execFileSync('openssl', ['pkcs12', '-in', 'gateway.p12', '-passin', 'pass:', ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  openssl('-nokeys', '-clcerts', '-out', 'gateway.crt');
  openssl('-nokeys', '-cacerts', '-out', 'ca.crt');
  openssl('-nocerts', '-nodes', '-out', 'gateway.key');
}

/**
 * Runs a stock mosquitto client (`mosquitto_pub`, `mosquitto_sub`) in `dir` against the gateway's
 * broker with the PEM files of extractPemFiles, then `args`: its exit code, stdout and stderr.
 */
export function runMosquitto(tool: 'mosquitto_pub' | 'mosquitto_sub', dir: string, gateway: TestGateway, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { port } = new URL(gateway.endpoint);
  const tls = ['-h', 'localhost', '-p', port, '--cafile', 'ca.crt', '--cert', 'gateway.crt', '--key', 'gateway.key'];
  return new Promise((resolve) => {
    const child = spawn(tool, [...tls, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
