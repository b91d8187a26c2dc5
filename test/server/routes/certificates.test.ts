import { execFileSync, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusedHandshakes } from '../../../src/mqtt/broker-stats.js';
import { issueClientCertificate, randomSerialHex } from '../../../src/pki/ca.js';
import { buildPkcs12 } from '../../../src/pki/pkcs12.js';
import { OTHER_CUSTOMER_REFUSED, otherCustomerToken } from '../../helpers/gateways.js';
import { call } from '../../helpers/http.js';
import { lacks } from '../../helpers/users.js';
import { GatewayClients, closedAt, connectGateway, provisionGateway, provisionedGateway, type Provisioned, type TestGateway } from '../../helpers/mqtt.js';
import { openPkcs12 } from '../../helpers/pkcs12.js';
import { selectRows } from '../../helpers/store-rows.js';
import { ADMIN_EMAIL, CUSTOMER, collectedLogs, startTestServer, type TestServer } from '../../helpers/server.js';

// Gateway certificates (DESIGN.md "Trust"): GET certificate, revoke-certificate and reprovision
// as an operator and a device meet them, over real HTTP and real MQTT over TLS with the
// certificates the service issued. Runs on both stores (vitest.config.ts).

let t: TestServer;
let logs: { msg: string; [field: string]: unknown }[];
const clients = new GatewayClients();
beforeAll(async () => {
  const collected = collectedLogs('info');
  logs = collected.lines;
  t = await startTestServer({ logger: collected.logger });
});
afterAll(async () => {
  await clients.endAll();
  await t?.close();
});

type Certificate = { serial: string; not_before: number; not_after: number; status: string };

const path = (id: string, resource: string) => `/${CUSTOMER}/gateways/${id}/${resource}`;
const admin = (method: string, url: string) => call(t.url, method, url, { token: t.adminToken });
const scan = (id: string) => JSON.stringify({ id, type: 'scan', scan_code: 'A-1', created: 1_700_000_000_000 });
const connectivity = async (id: string) => (await t.admin.get<{ connectivity_status: string }>(`/${CUSTOMER}/gateways/${id}`)).connectivity_status;

/** How a connection attempt ends: 'connected', the error it raised, or 'closed' without a word. */
function attempt(gateway: TestGateway): Promise<string> {
  const client = mqtt.connect(gateway.endpoint, { pfx: gateway.pkcs12, passphrase: '', reconnectPeriod: 0, connectTimeout: 5000 } as mqtt.IClientOptions);
  return new Promise<string>((resolve) => {
    client.once('connect', () => resolve('connected'));
    client.once('error', (error) => resolve(error.message));
    client.once('close', () => resolve('closed'));
  }).finally(() => client.end(true));
}

/** The gateway's own certificate in a PKCS#12 the service issued (not the CA's). */
function certificateIn(pkcs12: Buffer, gatewayId: string): X509Certificate {
  return openPkcs12(pkcs12).certificates.find((cert) => cert.subject === `CN=${gatewayId}`)!;
}

/** What GET certificate must say of the certificate in the PKCS#12. */
function described(certificate: X509Certificate, status: string): Certificate {
  return { serial: certificate.serialNumber.toLowerCase(), not_before: Date.parse(certificate.validFrom), not_after: Date.parse(certificate.validTo), status };
}

/** The device's side: redeems a token and holds the certificate bundle it got. */
async function redeem(token: string): Promise<TestGateway> {
  return provisionedGateway(await t.anonymous.post<Provisioned>('/provisioning', { token }));
}

async function reprovision(id: string): Promise<string> {
  const answer = await admin('POST', path(id, 'reprovision'));
  expect(answer.status).toBe(200);
  const body = answer.body as { registration_path: string; token: string; registration_url: string };
  expect(body).toEqual({ registration_path: '/provisioning', token: body.token, registration_url: `${t.url}/provisioning` });
  expect(body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return body.token;
}

describe('GET certificate', () => {
  it('is pending once prepared, active once the device fetched it, with the serial and validity of the certificate it holds', async () => {
    const created = await t.admin.post<{ id: string }>(`/${CUSTOMER}/gateways`, { name: 'status-1', usecase: 'picking', station: 's' });
    expect(await admin('GET', path(created.id, 'certificate'))).toMatchObject({
      status: 404,
      body: {
        title: 'Not Found',
        details: `Gateway "${created.id}" has no certificate: it was never prepared for provisioning (prepare-provisioning, or \`scanhub gateways provision\`).`,
      },
    });
    const { token } = await t.admin.post<{ token: string }>(path(created.id, 'prepare-provisioning'));
    const pending = await t.admin.get<Certificate>(path(created.id, 'certificate'));
    const device = await redeem(token);
    const certificate = certificateIn(device.pkcs12, created.id);
    expect(pending).toEqual(described(certificate, 'pending'));
    expect(pending.serial).toMatch(/^[0-9a-f]{32}$/);
    expect(await t.admin.get<Certificate>(path(created.id, 'certificate'))).toEqual(described(certificate, 'active'));
    // Ten years, so that operators can plan the renewal.
    expect(pending.not_after - pending.not_before).toBeGreaterThan(3650 * 86_400_000);
  });
});

describe('revoke-certificate', () => {
  it('disconnects the connected gateway within one second, refuses it at every later connect, and makes it NOT_REGISTERED', async () => {
    const gateway = await provisionGateway(t);
    const certificate = certificateIn(gateway.pkcs12, gateway.id);
    const client = await clients.connect(gateway);
    await client.publishAsync(gateway.topic, scan('0c7e3a52-5f0e-4a7d-9c61-3b1f2d4e5a01'), { qos: 1 });
    expect(await connectivity(gateway.id)).toBe('ACTIVE');

    const disconnected = closedAt(client);
    const revoking = Date.now();
    const answer = await admin('POST', path(gateway.id, 'revoke-certificate'));
    expect(answer).toMatchObject({ status: 200, body: described(certificate, 'revoked') });
    expect((await disconnected) - revoking).toBeLessThan(1000);
    expect(logs.filter((line) => line.msg === 'gateway disconnected by the service').at(-1)).toMatchObject({
      gateway_id: gateway.id,
      reason: `its certificate ${certificate.serialNumber.toLowerCase()} was revoked`,
    });

    const refusedBefore = t.server.broker.stats.connectsRefused;
    await expect(connectGateway(gateway)).rejects.toMatchObject({ code: 5 });
    expect(t.server.broker.stats.connectsRefused).toBe(refusedBefore + 1);
    expect(logs.filter((line) => line.msg === 'MQTT connect refused: the certificate was revoked').at(-1)).toMatchObject({
      gateway_id: gateway.id,
      serial: certificate.serialNumber.toLowerCase(),
    });
    expect(await t.admin.get<Certificate>(path(gateway.id, 'certificate'))).toEqual(described(certificate, 'revoked'));
    expect(await connectivity(gateway.id)).toBe('NOT_REGISTERED');

    expect(await admin('POST', path(gateway.id, 'revoke-certificate'))).toMatchObject({ status: 409, body: { title: 'Conflict' } });
    const again = (await admin('POST', path(gateway.id, 'revoke-certificate'))).body as { details: string };
    expect(again.details).toMatch(
      new RegExp(
        `^The certificate of gateway "${gateway.id}" was already revoked at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z; to give the gateway a new certificate, re-provision it \\(reprovision, or \`scanhub gateways reprovision\`\\)\\.$`,
      ),
    );
  });

  it('voids a token not yet redeemed: the device gets 403, the gateway stays NOT_REGISTERED', async () => {
    const created = await t.admin.post<{ id: string }>(`/${CUSTOMER}/gateways`, { name: 'void-1', usecase: 'picking', station: 's' });
    const { token } = await t.admin.post<{ token: string }>(path(created.id, 'prepare-provisioning'));
    expect(await connectivity(created.id)).toBe('REGISTERING');
    expect((await admin('POST', path(created.id, 'revoke-certificate'))).status).toBe(200);
    expect(await call(t.url, 'POST', '/provisioning', { json: { token } })).toMatchObject({ status: 403, body: { title: 'Forbidden' } });
    expect(await selectRows(t, 'SELECT sealed_key FROM gateway_certificates WHERE gateway_id = ?', created.id)).toEqual([{ sealed_key: null }]);
    expect(await connectivity(created.id)).toBe('NOT_REGISTERED');
  });
});

describe('revocation seen by an off-the-shelf client', () => {
  it('mosquitto_pub with the PEM files of the PKCS#12 publishes before revocation and is refused after it', async () => {
    const gateway = await provisionGateway(t);
    const dir = mkdtempSync(join(tmpdir(), 'scanhub-revoked-'));
    try {
      writeFileSync(join(dir, 'gateway.p12'), gateway.pkcs12);
      const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      openssl('pkcs12', '-in', 'gateway.p12', '-passin', 'pass:', '-nokeys', '-clcerts', '-out', 'gateway.crt');
      openssl('pkcs12', '-in', 'gateway.p12', '-passin', 'pass:', '-nokeys', '-cacerts', '-out', 'ca.crt');
      openssl('pkcs12', '-in', 'gateway.p12', '-passin', 'pass:', '-nocerts', '-nodes', '-out', 'gateway.key');
      const publish = (id: string) =>
        new Promise<{ code: number | null; stderr: string }>((resolve) => {
          const args = ['-h', 'localhost', '-p', String(t.server.mqttPort), '--cafile', 'ca.crt', '--cert', 'gateway.crt', '--key', 'gateway.key'];
          const child = spawn('mosquitto_pub', [...args, '-q', '1', '-t', gateway.topic, '-m', scan(id)], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
          let stderr = '';
          child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          child.on('exit', (code) => resolve({ code, stderr }));
        });
      expect(await publish('0c7e3a52-5f0e-4a7d-9c61-3b1f2d4e5a31')).toEqual({ code: 0, stderr: '' });
      expect((await admin('POST', path(gateway.id, 'revoke-certificate'))).status).toBe(200);
      const refused = await publish('0c7e3a52-5f0e-4a7d-9c61-3b1f2d4e5a32');
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/not authori[sz]ed/i);
      expect(await selectRows(t, 'SELECT id FROM events WHERE gateway_id = ?', gateway.id)).toEqual([{ id: '0c7e3a52-5f0e-4a7d-9c61-3b1f2d4e5a31' }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('reprovision', () => {
  it('keeps the old certificate working until the device redeems the new token, then revokes it and the device publishes under the same id', async () => {
    const gateway = await provisionGateway(t);
    const old = certificateIn(gateway.pkcs12, gateway.id);
    const oldClient = await clients.connect(gateway);
    await oldClient.publishAsync(gateway.topic, scan('0c7e3a52-5f0e-4a7d-9c61-3b1f2d4e5a11'), { qos: 1 });

    const token = await reprovision(gateway.id);
    expect(await connectivity(gateway.id)).toBe('REGISTERING');
    const pending = await t.admin.get<Certificate>(path(gateway.id, 'certificate'));
    expect(pending.status).toBe('pending');
    expect(pending.serial).not.toBe(old.serialNumber.toLowerCase());
    // Until the token is redeemed, the old certificate connects and publishes.
    await oldClient.publishAsync(gateway.topic, scan('0c7e3a52-5f0e-4a7d-9c61-3b1f2d4e5a12'), { qos: 1 });
    expect(oldClient.connected).toBe(true);
    const second = await clients.connect(gateway);
    expect(second.connected).toBe(true);
    expect(await connectivity(gateway.id)).toBe('REGISTERING');

    const disconnected = closedAt(second);
    const redeeming = Date.now();
    const device = await redeem(token);
    expect((await disconnected) - redeeming).toBeLessThan(1000);
    const fresh = certificateIn(device.pkcs12, gateway.id);
    expect(device.id).toBe(gateway.id);
    expect(device.topic).toBe(gateway.topic);
    expect(described(fresh, 'pending')).toEqual(pending);
    expect(await t.admin.get<Certificate>(path(gateway.id, 'certificate'))).toEqual(described(fresh, 'active'));
    await expect(connectGateway(gateway)).rejects.toMatchObject({ code: 5 });
    expect(await connectivity(gateway.id)).toBe('REGISTERING');

    const client = await clients.connect(device);
    await client.publishAsync(device.topic, scan('0c7e3a52-5f0e-4a7d-9c61-3b1f2d4e5a13'), { qos: 1 });
    expect(await selectRows(t, 'SELECT id, gateway_id FROM events WHERE gateway_id = ? ORDER BY id', gateway.id)).toEqual([
      { id: '0c7e3a52-5f0e-4a7d-9c61-3b1f2d4e5a11', gateway_id: gateway.id },
      { id: '0c7e3a52-5f0e-4a7d-9c61-3b1f2d4e5a12', gateway_id: gateway.id },
      { id: '0c7e3a52-5f0e-4a7d-9c61-3b1f2d4e5a13', gateway_id: gateway.id },
    ]);
    expect(await connectivity(gateway.id)).toBe('ACTIVE');
  });

  it('brings a revoked gateway back: NOT_REGISTERED, then REGISTERING, then ACTIVE with the new certificate', async () => {
    const gateway = await provisionGateway(t);
    expect((await admin('POST', path(gateway.id, 'revoke-certificate'))).status).toBe(200);
    expect(await connectivity(gateway.id)).toBe('NOT_REGISTERED');
    const token = await reprovision(gateway.id);
    expect(await connectivity(gateway.id)).toBe('REGISTERING');
    const device = await redeem(token);
    expect(await connectivity(gateway.id)).toBe('REGISTERING');
    const client = await clients.connect(device);
    await client.publishAsync(device.topic, scan('0c7e3a52-5f0e-4a7d-9c61-3b1f2d4e5a21'), { qos: 1 });
    expect(await connectivity(gateway.id)).toBe('ACTIVE');
    await expect(connectGateway(gateway)).rejects.toMatchObject({ code: 5 });
  });

  it('a second reprovision voids the first token; only the newest one works', async () => {
    const gateway = await provisionGateway(t);
    const first = await reprovision(gateway.id);
    const second = await reprovision(gateway.id);
    expect(await call(t.url, 'POST', '/provisioning', { json: { token: first } })).toMatchObject({ status: 403 });
    const device = await redeem(second);
    expect(await t.admin.get<Certificate>(path(gateway.id, 'certificate'))).toEqual(described(certificateIn(device.pkcs12, gateway.id), 'active'));
    // The first certificate (revoked by the redemption), the first reprovision's (revoked by the second), the one in use.
    const rows = await selectRows(t, 'SELECT serial FROM gateway_certificates WHERE gateway_id = ? AND revoked IS NULL', gateway.id);
    expect(rows).toEqual([{ serial: certificateIn(device.pkcs12, gateway.id).serialNumber.toLowerCase() }]);
    expect(await selectRows(t, 'SELECT serial FROM gateway_certificates WHERE gateway_id = ?', gateway.id)).toHaveLength(3);
  });
});

describe('audit', () => {
  it('records the reprovision, the redemption that revoked the old certificate, and the revocation, each with its certificate', async () => {
    const gateway = await provisionGateway(t, { name: 'audited-1' });
    const first = certificateIn(gateway.pkcs12, gateway.id).serialNumber.toLowerCase();
    const token = await reprovision(gateway.id);
    const second = certificateIn((await redeem(token)).pkcs12, gateway.id).serialNumber.toLowerCase();
    expect((await admin('POST', path(gateway.id, 'revoke-certificate'))).status).toBe(200);
    // Refused changes are not recorded.
    expect((await admin('POST', path(gateway.id, 'revoke-certificate'))).status).toBe(409);

    const adminActor = { type: 'user', id: (await t.admin.get<{ id: string }>(`/${CUSTOMER}/me`)).id, email: ADMIN_EMAIL };
    const entries = async (action: string) =>
      (await t.admin.get<{ items: { id: string; time: number; target?: { id: string } }[] }>(`/${CUSTOMER}/audit-log?action=${action}`)).items
        .filter((item) => item.target?.id === gateway.id)
        .map(({ id: _id, time: _time, ...rest }) => rest);
    const target = { type: 'gateway', id: gateway.id };
    expect(await entries('gateway.reprovisioned')).toEqual([
      { action: 'gateway.reprovisioned', actor: adminActor, target, ip: '127.0.0.1', details: { certificate_serial: second, key_type: 'ec-p256', replaces: first } },
    ]);
    expect(await entries('gateway.provisioned')).toEqual([
      { action: 'gateway.provisioned', actor: { type: 'device', id: gateway.id }, target, ip: '127.0.0.1', details: { name: 'audited-1', certificate_serial: second, revoked_serials: [first] } },
      { action: 'gateway.provisioned', actor: { type: 'device', id: gateway.id }, target, ip: '127.0.0.1', details: { name: 'audited-1', certificate_serial: first } },
    ]);
    expect(await entries('gateway.certificate_revoked')).toEqual([
      { action: 'gateway.certificate_revoked', actor: adminActor, target, ip: '127.0.0.1', details: { certificate_serial: second } },
    ]);
  });
});

describe('refusals', () => {
  let userToken: string;
  let otherToken: string;
  let deleted: string;
  let unprepared: string;
  beforeAll(async () => {
    userToken = (await t.createUser('USER_ROLE')).token;
    otherToken = await otherCustomerToken(t);
    deleted = (await provisionGateway(t)).id;
    await t.admin.delete(`/${CUSTOMER}/gateways/${deleted}`);
    unprepared = (await t.admin.post<{ id: string }>(`/${CUSTOMER}/gateways`, { name: 'never-prepared', usecase: 'u', station: 's' })).id;
  });

  const rows: { name: string; method: string; resource: string; gateway: () => string; token?: () => string; status: number; body: () => unknown }[] = [];
  for (const [method, resource] of [
    ['GET', 'certificate'],
    ['POST', 'revoke-certificate'],
    ['POST', 'reprovision'],
  ] as const) {
    rows.push(
      { name: `${method} ${resource} of a deleted gateway`, method, resource, gateway: () => deleted, status: 404, body: () => ({ title: 'Not Found', details: `Gateway "${deleted}" does not exist.` }) },
      { name: `${method} ${resource} by a USER_ROLE`, method, resource, gateway: () => unprepared, token: () => userToken, status: 403, body: () => lacks('gateway.provision') },
      { name: `${method} ${resource} by another customer`, method, resource, gateway: () => unprepared, token: () => otherToken, status: 403, body: () => OTHER_CUSTOMER_REFUSED },
    );
  }
  rows.push({
    name: 'POST reprovision of a gateway never prepared',
    method: 'POST',
    resource: 'reprovision',
    gateway: () => unprepared,
    status: 409,
    body: () => ({
      title: 'Conflict',
      details: `Gateway "${unprepared}" was never prepared for provisioning, so there is nothing to re-provision: prepare it first (prepare-provisioning, or \`scanhub gateways provision\`).`,
    }),
  });
  rows.push({
    name: 'POST revoke-certificate of a gateway never prepared',
    method: 'POST',
    resource: 'revoke-certificate',
    gateway: () => unprepared,
    status: 404,
    body: () => ({
      title: 'Not Found',
      details: `Gateway "${unprepared}" has no certificate: it was never prepared for provisioning (prepare-provisioning, or \`scanhub gateways provision\`).`,
    }),
  });

  for (const row of rows) {
    it(row.name, async () => {
      const answer = await call(t.url, row.method, path(row.gateway(), row.resource), { token: row.token?.() ?? t.adminToken });
      expect({ status: answer.status, body: answer.body }).toEqual({ status: row.status, body: row.body() });
    });
  }

  it('changes nothing when refused: the never-prepared gateway stays NOT_REGISTERED without a certificate', async () => {
    expect(await connectivity(unprepared)).toBe('NOT_REGISTERED');
    expect(await selectRows(t, 'SELECT serial FROM gateway_certificates WHERE gateway_id = ?', unprepared)).toEqual([]);
  });
});

describe('expiry', () => {
  it('refuses a certificate past its not_after in the TLS handshake, with a log line that says it expired', async () => {
    const gateway = await provisionGateway(t);
    const day = 86_400_000;
    const issued = issueClientCertificate(t.server.ctx.ca, gateway.id, randomSerialHex(), {
      validity: { notBefore: new Date(Date.now() - 30 * day), notAfter: new Date(Date.now() - day) },
    });
    const expired: TestGateway = { ...gateway, pkcs12: buildPkcs12(issued.keyPem, issued.certPem, t.server.ctx.ca.certPem) };
    const refusedBefore = refusedHandshakes(t.server.broker.stats);
    // TLS 1.3: the client's side of the handshake is done before the server checks the dates, so
    // the device sees its connection closed without a CONNACK.
    expect(await attempt(expired)).toBe('closed');
    // Counted under its own reason in /metrics (scanhub_mqtt_refused_handshakes_total{reason="tls_certificate_expired"}).
    expect(refusedHandshakes(t.server.broker.stats)).toEqual({ ...refusedBefore, tls_certificate_expired: refusedBefore.tls_certificate_expired + 1 });
    expect(logs.filter((line) => line.msg === 'MQTT TLS handshake refused: the client certificate expired')).toEqual([
      expect.objectContaining({
        level: 40,
        reason: 'CERT_HAS_EXPIRED',
        remote: expect.any(String),
        certificate_cn: gateway.id,
        serial: new X509Certificate(issued.certPem).serialNumber.toLowerCase(),
        not_after: new Date(new X509Certificate(issued.certPem).validTo).toISOString(),
      }),
    ]);
  });
});
