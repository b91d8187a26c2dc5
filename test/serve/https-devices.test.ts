import { request as httpsRequest } from 'node:https';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulationSummary } from '../../src/simulator/run.js';
import { runCli } from '../helpers/cli.js';
import type { Provisioned } from '../helpers/mqtt.js';
import { freePort, spawnServe, stop, type ServeProcess } from '../helpers/serve-process.js';
import { testDatabase, type TestDatabase } from '../helpers/test-store.js';

// Devices against an HTTPS deployment (`serve --https`): the simulator, and a device that finishes
// from a provisioning package, trusting nothing but the CA the package carries.

const PASSWORD = 'https-devices-password';
let work: string;
let serve: ServeProcess;
let database: TestDatabase;
let url: string;
let env: Record<string, string>;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'scanhub-https-devices-'));
  database = await testDatabase();
  const dataDir = join(work, 'data');
  serve = spawnServe(['--data-dir', dataDir, '--port', String(await freePort()), '--mqtt-port', '0', '--https'], { SCANHUB_ADMIN_PASSWORD: PASSWORD }, database);
  url = (await serve.stderrMatches(/scanhub is serving (\S+) /))[1]!;
  const ca = await runCli(['operator', 'ca', '--data-dir', dataDir, ...database.args], { env: database.env });
  writeFileSync(join(work, 'ca.pem'), ca.stdout);
  env = { XDG_CONFIG_HOME: join(work, 'config') };
  const login = await runCli(['login', '--url', url, '--email', 'admin@localhost', '--password-stdin', '--ca-cert', join(work, 'ca.pem')], { env, input: `${PASSWORD}\n` });
  expect(login.code).toBe(0);
});
afterAll(async () => {
  await stop(serve);
  await database.drop();
  rmSync(work, { recursive: true, force: true });
});

/** JSON over HTTPS trusting only `ca` (what a device holds). */
function deviceCall(target: string, ca: string, body?: object): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpsRequest(target, { method: payload ? 'POST' : 'GET', ca, headers: payload ? { 'content-type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) as unknown }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

describe('devices against an HTTPS deployment', () => {
  it('scanhub simulate provisions over HTTPS and every event it sends is stored', async () => {
    const run = await runCli(['simulate', '--gateways', '1', '--rate', '5', '--duration', '1s', '--prefix', 'tls-sim', '--json'], { env });
    expect({ code: run.code, provisioned: run.stderr.includes('Provisioned gateway tls-sim-1') }).toEqual({ code: 0, provisioned: true });
    const summary = JSON.parse(run.stdout) as SimulationSummary;
    expect({ failed: summary.messages_failed, acknowledged: summary.messages_acknowledged }).toEqual({ failed: 0, acknowledged: summary.messages_sent });
    const gatewayId = summary.gateways[0]!.id;
    const listed = await runCli(['events', 'list', '--gateway', gatewayId, '--limit', '500', '--json'], { env });
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as unknown[]).length).toBe(summary.events_sent);
  });

  it('a provisioning package carries the CA: the device redeems its token over HTTPS and publishes over mqtts', async () => {
    const made = await runCli(['gateways', 'package', '--new', 'tls-dock', '--json'], { env });
    expect(made.code).toBe(0);
    const [entry] = (JSON.parse(made.stdout) as { gateways: { gateway_id: string; package_url: string }[] }).gateways;
    // The technician's tool trusts the deployment (it was given the CA at login) ...
    const ca = (await runCli(['operator', 'ca', '--data-dir', join(work, 'data'), ...database.args], { env: database.env })).stdout;
    const fetched = await deviceCall(entry!.package_url, ca);
    const document = fetched.body as { base_url: string; registration_path: string; token: string; gateway_id: string; ca_certificate: string };
    expect({ status: fetched.status, base_url: document.base_url, gateway_id: document.gateway_id, ca_certificate: document.ca_certificate }).toEqual({
      status: 200,
      base_url: url,
      gateway_id: entry!.gateway_id,
      ca_certificate: ca,
    });
    // ... and the device trusts only what the package holds.
    const redeemed = await deviceCall(document.base_url + document.registration_path, document.ca_certificate, { token: document.token });
    expect(redeemed.status).toBe(200);
    const provisioned = redeemed.body as Provisioned;
    expect(provisioned.certificate_common_name).toBe(entry!.gateway_id);
    const client = await mqtt.connectAsync(provisioned.mqtt_endpoint, {
      ...{ pfx: Buffer.from(provisioned.pkcs12, 'base64'), passphrase: '' },
      protocolVersion: 4,
      reconnectPeriod: 0,
      connectTimeout: 5000,
    });
    const scan = { type: 'scan', scan_code: 'TLS-PACKAGE-1', created: Date.now() };
    await client.publishAsync(`${provisioned.mqtt_topic_prefix}/gateway/${entry!.gateway_id}`, JSON.stringify(scan), { qos: 1 });
    await client.endAsync();
    const listed = await runCli(['events', 'list', '--gateway', entry!.gateway_id, '--json'], { env });
    expect((JSON.parse(listed.stdout) as { scan_code: string }[]).map((e) => e.scan_code)).toEqual(['TLS-PACKAGE-1']);
  });
});
