import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { selectRows } from '../helpers/store-rows.js';
import { mqttString, provisionGateway, readBytes } from '../helpers/mqtt.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// What an off-the-shelf device does (docs/gateways-mqtt.md shows it with mosquitto_pub): take the
// PKCS#12 apart with openssl, then speak MQTT 3.1.1 over TLS with the PEM files. Here the MQTT
// bytes are written by hand, so nothing of our own client code is involved.

let t: TestServer;
let dir: string;
beforeEach(async () => {
  t = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), 'scanhub-offtheshelf-'));
});
afterEach(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });

it('accepts an MQTT client that only has the PEM files openssl extracted from the PKCS#12', async () => {
  const gateway = await provisionGateway(t, { usecase: 'outbound', station: 'gate-2' });
  writeFileSync(join(dir, 'gateway.p12'), gateway.pkcs12);
  // OpenSSL 3 reads the bundle without -legacy; the password is empty.
  openssl('pkcs12', '-in', 'gateway.p12', '-passin', 'pass:', '-nokeys', '-clcerts', '-out', 'gateway.crt');
  openssl('pkcs12', '-in', 'gateway.p12', '-passin', 'pass:', '-nokeys', '-cacerts', '-out', 'ca.crt');
  openssl('pkcs12', '-in', 'gateway.p12', '-passin', 'pass:', '-nocerts', '-nodes', '-out', 'gateway.key');

  const socket = connect({
    host: '127.0.0.1',
    port: t.server.mqttPort,
    // The broker's certificate names the public host (localhost here) and verifies against the CA.
    servername: 'localhost',
    ca: readFileSync(join(dir, 'ca.crt')),
    cert: readFileSync(join(dir, 'gateway.crt')),
    key: readFileSync(join(dir, 'gateway.key')),
  });
  await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
  socket.pause();

  // CONNECT: protocol "MQTT" level 4, clean session, keep alive 60, client id "device-7".
  const connectBody = Buffer.concat([mqttString('MQTT'), Buffer.from([4, 0x02, 0, 60]), mqttString('device-7')]);
  socket.write(Buffer.concat([Buffer.from([0x10, connectBody.length]), connectBody]));
  // CONNACK: session present 0, return code 0 (accepted).
  expect([...(await readBytes(socket, 4))]).toEqual([0x20, 2, 0, 0]);

  // PUBLISH QoS 1 (0x32), packet id 0x0107, one scan.
  const payload = Buffer.from(JSON.stringify({ id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d', type: 'scan', scan_code: 'PALLET-0042' }));
  const publishBody = Buffer.concat([mqttString(gateway.topic), Buffer.from([0x01, 0x07]), payload]);
  // Two bytes of remaining length cover 128..16383.
  expect(publishBody.length).toBeGreaterThanOrEqual(128);
  expect(publishBody.length).toBeLessThan(16_384);
  const remaining = [(publishBody.length & 0x7f) | 0x80, publishBody.length >> 7];
  socket.write(Buffer.concat([Buffer.from([0x32, ...remaining]), publishBody]));
  // PUBACK for packet id 0x0107, sent after the commit.
  expect([...(await readBytes(socket, 4))]).toEqual([0x40, 2, 0x01, 0x07]);
  expect((await selectRows(t.server, 'SELECT id, scan_code, gateway_id, gateway_usecase, gateway_station FROM events'))).toEqual([
    { id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d', scan_code: 'PALLET-0042', gateway_id: gateway.id, gateway_usecase: 'outbound', gateway_station: 'gate-2' },
  ]);

  socket.write(Buffer.from([0xe0, 0])); // DISCONNECT
  socket.end();
});
