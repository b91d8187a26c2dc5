import { once } from 'node:events';
import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import mqtt, { type MqttClient } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { PROXY_V2_SIGNATURE } from '../../src/mqtt/proxy-protocol.js';
import { GatewayClients, connectGateway, provisionGateway, type TestGateway } from '../helpers/mqtt.js';
import { environmentSwitch } from '../../src/cli/serve/flags.js';
import { runCli } from '../helpers/cli.js';
import { collectedLogs, startTestServer, type TestServer } from '../helpers/server.js';
import { countRows } from '../helpers/store-rows.js';

// serve --mqtt-proxy-protocol: every MQTT connection starts with the PROXY v2 header a balancer in
// TCP mode writes (HAProxy's send-proxy-v2), and logs and caps name the client it carries. Here
// the header is written by hand on a real socket, then mutual TLS and MQTT run over the same
// socket; test/cluster/haproxy.postgres.test.ts has a real HAProxy in front.

let t: TestServer;
let logs: { msg: string; [field: string]: unknown }[];
const clients = new GatewayClients();

async function start(limits: Parameters<typeof startTestServer>[0] = {}) {
  const collected = collectedLogs('info');
  logs = collected.lines;
  t = await startTestServer({ logger: collected.logger, mqttProxyProtocol: true, ...limits });
}

/** A PROXY v2 header for TCP over IPv4 from `client`:port, or LOCAL without an address. */
function proxyHeader(client?: { address: string; port: number }): Buffer {
  if (!client) return Buffer.concat([PROXY_V2_SIGNATURE, Buffer.from([0x20, 0x00, 0x00, 0x00])]);
  const addresses = Buffer.alloc(12);
  Buffer.from(client.address.split('.').map(Number)).copy(addresses, 0);
  Buffer.from([127, 0, 0, 1]).copy(addresses, 4);
  addresses.writeUInt16BE(client.port, 8);
  addresses.writeUInt16BE(8883, 10);
  return Buffer.concat([PROXY_V2_SIGNATURE, Buffer.from([0x21, 0x11, 0x00, 12]), addresses]);
}

/** A TCP connection to the broker that has sent `bytes` (written in two pieces, as a slow network would). */
async function tcpWith(bytes: Buffer): Promise<Socket> {
  const socket = tcpConnect({ host: '127.0.0.1', port: t.server.mqttPort });
  await once(socket, 'connect');
  socket.write(bytes.subarray(0, 7));
  socket.write(bytes.subarray(7));
  return socket;
}

/** An MQTT client whose TLS runs over a TCP connection that started with `header`. */
async function connectBehind(gateway: TestGateway, header: Buffer): Promise<MqttClient> {
  const socket = await tcpWith(header);
  const tls = tlsConnect({ socket, pfx: gateway.pkcs12, passphrase: '' });
  const client = new mqtt.MqttClient(() => tls, { protocolVersion: 4, reconnectPeriod: 0, clientId: 'ignored' });
  await new Promise((resolve, reject) => client.once('connect', resolve).once('error', reject));
  return client;
}

const connectedLines = () => logs.filter((line) => line.msg === 'gateway connected');
const refusedLines = () => logs.filter((line) => line.msg === 'MQTT connection refused: no valid PROXY protocol v2 header (--mqtt-proxy-protocol)');

describe('serve --mqtt-proxy-protocol', () => {
  afterEach(async () => {
    await clients.endAll();
    await t.close();
  });

  it('takes the client from the header: the gateway connects over TLS after it, publishes, and the log names the client', async () => {
    await start();
    const gateway = await provisionGateway(t);
    const client = await connectBehind(gateway, proxyHeader({ address: '203.0.113.7', port: 40001 }));
    await client.publishAsync(gateway.topic, JSON.stringify({ id: '7d1f4c1e-3b9a-4f2e-8a51-0c6d2e9b1a01', type: 'scan', scan_code: 'A-1', created: 1_700_000_000_000 }), { qos: 1 });
    await client.endAsync();
    expect(await countRows(t, 'events')).toBe(1);
    expect(connectedLines().map((line) => [line.gateway_id, line.remote])).toEqual([[gateway.id, '203.0.113.7']]);
    expect(t.server.broker.stats.proxyHeadersRefused).toBe(0);
  });

  it('hands out the balancer\'s port in mqtt_endpoint with --mqtt-public-port, while listening on its own', async () => {
    await start({ mqttPublicPort: 18883 });
    const gateway = await provisionGateway(t);
    expect(gateway.endpoint).toBe('mqtts://localhost:18883');
    expect(t.server.mqttPort).not.toBe(18883);
    // The broker itself still answers on the port it bound.
    const client = await connectBehind(gateway, proxyHeader({ address: '203.0.113.8', port: 1 }));
    await client.endAsync();
  });

  it('takes a LOCAL header (the balancer itself) as the socket peer', async () => {
    await start();
    const gateway = await provisionGateway(t);
    const client = await connectBehind(gateway, proxyHeader());
    await client.endAsync();
    expect(connectedLines().map((line) => line.remote)).toEqual(['127.0.0.1']);
  });

  it('refuses a connection without the header (a gateway that bypasses the balancer), and counts and logs it', async () => {
    await start();
    const gateway = await provisionGateway(t);
    await expect(connectGateway(gateway)).rejects.toThrow();
    expect(t.server.broker.stats).toMatchObject({ proxyHeadersRefused: 1, connections: 0, handshakesRefused: 0 });
    expect(refusedLines().map((line) => [line.remote, line.reason])).toEqual([['127.0.0.1', 'the connection does not start with a PROXY protocol v2 header']]);
  });

  it('closes a connection whose header is not complete within the handshake deadline', async () => {
    await start({ mqttLimits: { handshakeTimeoutMs: 300 } });
    const socket = await tcpWith(proxyHeader({ address: '198.51.100.4', port: 1 }).subarray(0, 20));
    await once(socket, 'close');
    expect(t.server.broker.stats.proxyHeadersRefused).toBe(1);
    expect(refusedLines().map((line) => line.reason)).toEqual(['no complete header within 300 ms']);
  });

  it('refuses nothing when a TCP health check connects and closes without a byte', async () => {
    await start();
    const socket = tcpConnect({ host: '127.0.0.1', port: t.server.mqttPort });
    await once(socket, 'connect');
    socket.end();
    await once(socket, 'close');
    // The server has seen the close once a later connection is served.
    const gateway = await provisionGateway(t);
    const client = await connectBehind(gateway, proxyHeader({ address: '192.0.2.9', port: 2 }));
    await client.endAsync();
    expect(t.server.broker.stats.proxyHeadersRefused).toBe(0);
    expect(refusedLines()).toEqual([]);
  });

  it('closes a connection with a valid header from a peer outside --mqtt-proxy-trust: it cannot choose the address the caps count', async () => {
    await start({ mqttProxyTrust: ['10.0.0.0/8', 'fd00::/8'] });
    const gateway = await provisionGateway(t);
    await expect(connectBehind(gateway, proxyHeader({ address: '203.0.113.7', port: 40001 }))).rejects.toThrow();
    expect(t.server.broker.stats).toMatchObject({ proxyHeadersRefused: 1, connections: 0 });
    const untrusted = logs.filter((line) => line.msg === 'MQTT connection refused: the peer is not a balancer of --mqtt-proxy-trust');
    expect(untrusted.map((line) => line.remote)).toEqual(['127.0.0.1']);
    expect(connectedLines()).toEqual([]);
  });

  it('trusts the peer of a --mqtt-proxy-trust range that holds it', async () => {
    await start({ mqttProxyTrust: ['10.0.0.0/8', '127.0.0.1'] });
    const gateway = await provisionGateway(t);
    const client = await connectBehind(gateway, proxyHeader({ address: '203.0.113.8', port: 40002 }));
    await client.endAsync();
    expect(connectedLines().map((line) => line.remote)).toEqual(['203.0.113.8']);
  });

  it('counts the per-source cap on unauthenticated connections by the client the header names, not by the balancer', async () => {
    await start({ mqttLimits: { maxUnauthenticatedPerSource: 1 } });
    // Two clients behind the balancer each hold one connection that has not sent TLS yet.
    const first = await tcpWith(proxyHeader({ address: '198.51.100.1', port: 1 }));
    const second = await tcpWith(proxyHeader({ address: '198.51.100.2', port: 1 }));
    // A second connection of the first client is over its cap: closed at once.
    const third = await tcpWith(proxyHeader({ address: '198.51.100.1', port: 2 }));
    await once(third, 'close');
    expect(t.server.broker.stats).toMatchObject({ connectionsOverCap: 1, unauthenticated: 2 });
    expect(first.destroyed || second.destroyed).toBe(false);
    first.destroy();
    second.destroy();
  });
});

describe('SCANHUB_MQTT_PROXY_PROTOCOL', () => {
  it('reads 1/true/yes/on and 0/false/no/off (empty or unset is off)', () => {
    expect(['1', 'true', 'YES', ' on '].map((value) => environmentSwitch('X', value))).toEqual([true, true, true, true]);
    expect(['0', 'false', 'No', 'off', '', undefined].map((value) => environmentSwitch('X', value))).toEqual([false, false, false, false, false, false]);
  });

  it('refuses anything else in one line with exit 2, before listening', async () => {
    const result = await runCli(['serve', '--port', '0', '--mqtt-port', '0', '--data-dir', '/nonexistent/never-created'], { env: { SCANHUB_MQTT_PROXY_PROTOCOL: 'maybe' } });
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toBe('scanhub: SCANHUB_MQTT_PROXY_PROTOCOL: "maybe" is neither 1/true/yes/on nor 0/false/no/off\n');
  });

  it('SCANHUB_MQTT_PROXY_TRUST that is no address or range: one line, exit 2, before listening', async () => {
    const result = await runCli(['serve', '--port', '0', '--mqtt-port', '0', '--data-dir', '/nonexistent/never-created'], { env: { SCANHUB_MQTT_PROXY_TRUST: '10.0.0.0/8,balancer' } });
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toBe(
      'error: option \'--mqtt-proxy-trust <cidrs>\' value \'10.0.0.0/8,balancer\' from env \'SCANHUB_MQTT_PROXY_TRUST\' is invalid. "balancer" is not an IP address or CIDR range (such as 10.0.0.0/8 or fd00::/8).\n(run with --help for usage)\n',
    );
  });
});
