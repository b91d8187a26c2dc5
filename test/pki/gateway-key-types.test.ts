import { spawn } from 'node:child_process';
import { X509Certificate, createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyTypeOf, type KeyType } from '../../src/pki/keys.js';
import type { SimulationSummary } from '../../src/simulator/run.js';
import { openStore, sqliteLocator } from '../../src/store/open.js';
import type { Store } from '../../src/store/ports/index.js';
import { runCli } from '../helpers/cli.js';
import { readFixture } from '../helpers/fixtures.js';
import { call } from '../helpers/http.js';
import { connectGateway, provisionedGateway, type Provisioned, type TestGateway } from '../helpers/mqtt.js';
import { openPkcs12 } from '../helpers/pkcs12.js';
import { freePort, spawnServe, stop, type ServeProcess } from '../helpers/serve-process.js';
import { testDatabase, type TestDatabase } from '../helpers/test-store.js';

// `serve --gateway-key-type` (issue 17), all through a `serve` process as an operator runs it, on
// a deployment whose CA node-forge made before this version: first with RSA 2048 gateway keys,
// then restarted with the default EC P-256. Every PKCS#12 is judged by openssl, Node's tls,
// mosquitto_pub and mqtt.js (the simulator's client).

const CUSTOMER = 'default';
const PASSWORD = 'key-types-password';
const fixture = (name: string) => readFixture(`forge-ca/${name}`);
/** The gateway whose certificate (fixtures/forge-ca/gateway.crt) node-forge issued before this version. */
const FORGE_ERA_GATEWAY = 'c0ffee00-0000-4000-8000-000000000001';
const FORGE_ERA_TOKEN = 'forge-era-token-0123456789abcdefghijklmnopq';

let work: string;
let dataDir: string;
let database: TestDatabase;
let serve: ServeProcess | undefined;
/** One MQTT port across restarts: devices keep the endpoint they were given. */
let mqttPort: number;
let url: string;
let token: string;

/** The deployment's store, opened while no serve runs (seeding what an older version left). */
async function withStore<T>(use: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(database.locator(dataDir) ?? sqliteLocator(dataDir), 'server');
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'scanhub-key-types-'));
  dataDir = join(work, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  database = await testDatabase();
  mqttPort = await freePort();
  await withStore(async (store) => {
    await store.secrets.getOrCreate('pki/ca.key', () => fixture('ca.key'));
    await store.secrets.getOrCreate('pki/ca.crt', () => fixture('ca.crt'));
  });
});
afterAll(async () => {
  if (serve) await stop(serve);
  await database.drop();
  rmSync(work, { recursive: true, force: true });
});

/** Starts serve on the deployment with `args` and `env`; the key type its start-up log line names. */
async function startServe(args: string[], env: Record<string, string> = {}): Promise<string> {
  if (serve) await stop(serve);
  serve = spawnServe(['--data-dir', dataDir, '--port', String(await freePort()), '--mqtt-port', String(mqttPort), ...args], { SCANHUB_ADMIN_PASSWORD: PASSWORD, ...env }, database);
  url = (await serve.stderrMatches(/scanhub is serving (\S+) /))[1]!;
  const login = await call(url, 'POST', '/auth/login', { json: { email: 'admin@localhost', password: PASSWORD } });
  token = (login.body as { id_token: string }).id_token;
  const listening = serve
    .stdout()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { msg: string; gatewayKeyType?: string })
    .find((line) => line.msg === 'scanhub listening');
  return listening!.gatewayKeyType!;
}

async function api<T>(method: string, path: string, json?: unknown): Promise<T> {
  const answer = await call(url, method, path, { token, ...(json === undefined ? {} : { json }) });
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
  return answer.body as T;
}

/** What a device does with its token. */
async function redeem(provisioningToken: string): Promise<TestGateway> {
  const answer = await call(url, 'POST', '/provisioning', { json: { token: provisioningToken } });
  expect(answer.status).toBe(200);
  return provisionedGateway(answer.body as Provisioned);
}

async function provision(name: string): Promise<TestGateway> {
  const gateway = await api<{ id: string }>('POST', `/${CUSTOMER}/gateways`, { name, usecase: 'picking', station: 'station-1' });
  return redeem((await api<{ token: string }>('POST', `/${CUSTOMER}/gateways/${gateway.id}/prepare-provisioning`)).token);
}

/** New gateways through a provisioning package, each document fetched by its link and redeemed. */
async function throughPackage(names: string[]): Promise<TestGateway[]> {
  const made = await api<{ gateways: { package_url: string }[] }>('POST', `/${CUSTOMER}/create-provisioning-package`, { gateways: names.map((gateway_name) => ({ gateway_name })) });
  const documents = await Promise.all(made.gateways.map(async ({ package_url }) => (await call(package_url, 'GET', '')).body as { token: string }));
  return Promise.all(documents.map((document) => redeem(document.token)));
}

/** The key type of the PKCS#12 as openssl reads it, after checking that it opens in Node's tls too. */
function keyTypeIn(gateway: TestGateway): KeyType | undefined {
  expect(() => createSecureContext({ pfx: gateway.pkcs12, passphrase: '' })).not.toThrow();
  const { key, certificates } = openPkcs12(gateway.pkcs12);
  expect(certificates[0]!.checkPrivateKey(key)).toBe(true);
  expect(certificates[0]!.subject).toBe(`CN=${gateway.id}`);
  // Every certificate chains to the CA that node-forge made, which the bundle carries.
  expect(certificates[0]!.verify(new X509Certificate(fixture('ca.crt')).publicKey)).toBe(true);
  expect(certificates[1]!.raw).toEqual(new X509Certificate(fixture('ca.crt')).raw);
  return keyTypeOf(key);
}

const scan = (id: string) => JSON.stringify({ id, type: 'scan', scan_code: `CODE-${id.slice(-4)}` });

/** `mosquitto_pub` with the PEM files openssl took out of the PKCS#12: its exit code and stderr. */
async function mosquittoPublish(gateway: TestGateway, eventId: string): Promise<{ code: number | null; stderr: string }> {
  const dir = mkdtempSync(join(work, 'mosquitto-'));
  const { keyPem, certificatePems } = openPkcs12(gateway.pkcs12);
  writeFileSync(join(dir, 'gateway.key'), keyPem);
  writeFileSync(join(dir, 'gateway.crt'), certificatePems[0]!);
  writeFileSync(join(dir, 'ca.crt'), certificatePems[1]!);
  const port = new URL(gateway.endpoint).port;
  const args = ['-h', 'localhost', '-p', port, '--cafile', 'ca.crt', '--cert', 'gateway.crt', '--key', 'gateway.key', '-q', '1', '-t', gateway.topic, '-m', scan(eventId)];
  return new Promise((resolve) => {
    const child = spawn('mosquitto_pub', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

/** mqtt.js with the PKCS#12 as `pfx` (as `scanhub simulate` connects): publishes one event at QoS 1. */
async function mqttJsPublish(gateway: TestGateway, eventId: string): Promise<void> {
  const client = await connectGateway(gateway);
  try {
    await client.publishAsync(gateway.topic, scan(eventId), { qos: 1 });
  } finally {
    await client.endAsync(true);
  }
}

async function storedEventIds(gatewayId: string): Promise<string[]> {
  const page = await api<{ items: { id: string }[] }>('GET', `/${CUSTOMER}/events?gateway_id=${gatewayId}&start_time_millis=0`);
  return page.items.map((event) => event.id).sort();
}

async function auditedKeyTypes(action: string, gatewayId: string): Promise<unknown[]> {
  const page = await api<{ items: { target?: { id: string }; details?: { key_type?: string } }[] }>('GET', `/${CUSTOMER}/audit-log?action=${action}`);
  return page.items.filter((item) => item.target?.id === gatewayId).map((item) => item.details?.key_type);
}

async function simulate(prefix: string): Promise<void> {
  const env = { SCANHUB_URL: url, SCANHUB_TOKEN: token, SCANHUB_CUSTOMER: CUSTOMER, XDG_CONFIG_HOME: join(work, `config-${prefix}`) };
  const run = await runCli(['simulate', '--gateways', '1', '--rate', '5', '--duration', '1s', '--prefix', prefix, '--json'], { env });
  expect({ code: run.code, provisioned: run.stderr.includes(`Provisioned gateway ${prefix}-1`) }).toEqual({ code: 0, provisioned: true });
  const summary = JSON.parse(run.stdout) as SimulationSummary;
  expect({ failed: summary.messages_failed, acknowledged: summary.messages_acknowledged }).toEqual({ failed: 0, acknowledged: summary.messages_sent });
  expect(await auditedKeyTypes('gateway.prepared', summary.gateways[0]!.id)).toEqual([expectedKeyType]);
}

let expectedKeyType: KeyType;
let rsaGateway: TestGateway;

describe('serve --gateway-key-type rsa-2048, on a deployment whose CA node-forge made', () => {
  beforeAll(async () => {
    expectedKeyType = 'rsa-2048';
    expect(await startServe(['--gateway-key-type', 'rsa-2048'])).toBe('rsa-2048');
  });

  it('issues RSA 2048 keys that openssl and Node open, mosquitto_pub and mqtt.js publish with, audited as rsa-2048', async () => {
    rsaGateway = await provision('rsa-dock');
    expect(keyTypeIn(rsaGateway)).toBe('rsa-2048');
    expect(await mosquittoPublish(rsaGateway, '5e0a0000-0000-4000-8000-000000000001')).toEqual({ code: 0, stderr: '' });
    await mqttJsPublish(rsaGateway, '5e0a0000-0000-4000-8000-000000000002');
    expect(await storedEventIds(rsaGateway.id)).toEqual(['5e0a0000-0000-4000-8000-000000000001', '5e0a0000-0000-4000-8000-000000000002']);
    expect(await auditedKeyTypes('gateway.prepared', rsaGateway.id)).toEqual(['rsa-2048']);
  });

  it('issues RSA keys through a provisioning package', async () => {
    const gateways = await throughPackage(['rsa-package-1', 'rsa-package-2']);
    expect(gateways.map(keyTypeIn)).toEqual(['rsa-2048', 'rsa-2048']);
    await mqttJsPublish(gateways[1]!, '5e0a0000-0000-4000-8000-000000000003');
    expect(await auditedKeyTypes('gateway.prepared', gateways[0]!.id)).toEqual(['rsa-2048']);
  });

  it('scanhub simulate provisions (its own EC key, by certificate request) and publishes on a deployment issuing RSA keys', async () => {
    await simulate('rsa-sim');
  });
});

describe('then restarted with the default, EC P-256', () => {
  beforeAll(async () => {
    if (serve) await stop(serve);
    // What a version before sealed keys left once upgraded: a gateway whose certificate node-forge
    // made, prepared, not yet redeemed, its key (stored in clear then) dropped by the upgrade.
    await withStore(async (store) => {
      const now = Date.now();
      await store.gateways.createAll(CUSTOMER, [{ id: FORGE_ERA_GATEWAY, name: 'forge-era', usecase: 'picking', station: 'station-1' }], now);
      const certPem = fixture('gateway.crt');
      const certificate = { serial: '5ca1ab1e0001', commonName: FORGE_ERA_GATEWAY, certPem, sealedKey: null, notAfter: Date.parse(new X509Certificate(certPem).validTo) };
      const tokenHash = createHash('sha256').update(FORGE_ERA_TOKEN).digest('hex');
      expect(await store.provisioning.prepare(CUSTOMER, { gatewayId: FORGE_ERA_GATEWAY, certificate, tokenHash, expiresAt: now + 3_600_000 }, now)).toBe('prepared');
    });
    expectedKeyType = 'ec-p256';
    expect(await startServe([])).toBe('ec-p256');
  });

  it('issues EC P-256 keys that openssl and Node open, mosquitto_pub and mqtt.js publish with, audited as ec-p256', async () => {
    const gateway = await provision('ec-dock');
    expect(keyTypeIn(gateway)).toBe('ec-p256');
    expect(await mosquittoPublish(gateway, '5e0b0000-0000-4000-8000-000000000001')).toEqual({ code: 0, stderr: '' });
    await mqttJsPublish(gateway, '5e0b0000-0000-4000-8000-000000000002');
    expect(await storedEventIds(gateway.id)).toEqual(['5e0b0000-0000-4000-8000-000000000001', '5e0b0000-0000-4000-8000-000000000002']);
    expect(await auditedKeyTypes('gateway.prepared', gateway.id)).toEqual(['ec-p256']);
  });

  it('keeps accepting the RSA gateway issued before the restart', async () => {
    await mqttJsPublish(rsaGateway, '5e0a0000-0000-4000-8000-000000000004');
    expect(await mosquittoPublish(rsaGateway, '5e0a0000-0000-4000-8000-000000000005')).toEqual({ code: 0, stderr: '' });
  });

  it('hands out a fresh key and certificate for a token of before this version, whose stored key the upgrade dropped; the CA node-forge made signs it', async () => {
    const gateway = await redeem(FORGE_ERA_TOKEN);
    // The key type serve issues now, a new serial; keyTypeIn checks the chain to the forge-made CA.
    expect(keyTypeIn(gateway)).toBe('ec-p256');
    expect(openPkcs12(gateway.pkcs12).certificates[0]!.serialNumber).not.toBe(new X509Certificate(fixture('gateway.crt')).serialNumber);
    expect(await mosquittoPublish(gateway, '5e0c0000-0000-4000-8000-000000000001')).toEqual({ code: 0, stderr: '' });
    expect(await storedEventIds(FORGE_ERA_GATEWAY)).toEqual(['5e0c0000-0000-4000-8000-000000000001']);
  });

  it('re-provisions the RSA gateway with an EC key: the new one publishes, the RSA one is refused once it is redeemed', async () => {
    const { token: reprovisionToken } = await api<{ token: string }>('POST', `/${CUSTOMER}/gateways/${rsaGateway.id}/reprovision`);
    const renewed = await redeem(reprovisionToken);
    expect(renewed.id).toBe(rsaGateway.id);
    expect(keyTypeIn(renewed)).toBe('ec-p256');
    expect(await mosquittoPublish(renewed, '5e0a0000-0000-4000-8000-000000000006')).toEqual({ code: 0, stderr: '' });
    const refused = await mosquittoPublish(rsaGateway, '5e0a0000-0000-4000-8000-000000000007');
    expect({ code: refused.code === 0 ? 0 : 'failed', stderr: /not authori[sz]ed/i.test(refused.stderr) }).toEqual({ code: 'failed', stderr: true });
    expect(await auditedKeyTypes('gateway.reprovisioned', rsaGateway.id)).toEqual(['ec-p256']);
    expect(await storedEventIds(rsaGateway.id)).toEqual([1, 2, 4, 5, 6].map((n) => `5e0a0000-0000-4000-8000-00000000000${n}`));
  });

  it('issues EC keys through a provisioning package', async () => {
    const gateways = await throughPackage(['ec-package-1', 'ec-package-2']);
    expect(gateways.map(keyTypeIn)).toEqual(['ec-p256', 'ec-p256']);
    expect(await mosquittoPublish(gateways[0]!, '5e0d0000-0000-4000-8000-000000000001')).toEqual({ code: 0, stderr: '' });
  });

  it('scanhub simulate provisions (its own key, by certificate request) and publishes', async () => {
    await simulate('ec-sim');
  });
});

describe('choosing the key type', () => {
  it('takes SCANHUB_GATEWAY_KEY_TYPE, and the flag over it', async () => {
    expect(await startServe([], { SCANHUB_GATEWAY_KEY_TYPE: 'rsa-2048' })).toBe('rsa-2048');
    expect(await startServe(['--gateway-key-type', 'ec-p256'], { SCANHUB_GATEWAY_KEY_TYPE: 'rsa-2048' })).toBe('ec-p256');
  });

  it.each([
    [['--gateway-key-type', 'rsa-4096'], {}, "argument 'rsa-4096' is invalid. \"rsa-4096\""],
    [[], { SCANHUB_GATEWAY_KEY_TYPE: 'EC-P256' }, "value 'EC-P256' from env 'SCANHUB_GATEWAY_KEY_TYPE' is invalid. \"EC-P256\""],
  ])('refuses %j %j with exit 2 before listening, in one line (and the usual hint)', async (args, env, said) => {
    const refused = spawnServe(['--data-dir', join(work, 'never'), '--port', '0', '--mqtt-port', '0', ...args], env);
    const { code } = await refused.exited;
    expect(code).toBe(2);
    expect(refused.stderr()).toBe(`error: option '--gateway-key-type <type>' ${said} is not a key type: give ec-p256 or rsa-2048.\n(run with --help for usage)\n`);
    expect(refused.stdout()).toBe('');
  });
});
