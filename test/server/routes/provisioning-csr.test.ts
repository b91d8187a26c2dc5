import { execFileSync } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSR_MAX_LENGTH } from '../../../src/pki/csr.js';
import * as der from '../../../src/pki/der.js';
import { openGatewayKey } from '../../../src/pki/sealed-key.js';
import { mosquittoPublish, opensslDeviceKey, opensslText, type DeviceKeyKind } from '../../helpers/device-key.js';
import { call } from '../../helpers/http.js';
import { connectGateway, provisionedGateway, type Provisioned } from '../../helpers/mqtt.js';
import { openPkcs12 } from '../../helpers/pkcs12.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';
import { selectRows } from '../../helpers/store-rows.js';

// POST /provisioning { token, csr } (docs/gateways.md "Provisioning with the device's own key"):
// requests made by `openssl req`, certificates judged by `openssl x509`, bundles by `openssl
// pkcs12` (no -legacy), and the device's own key used by a stock mosquitto_pub.

let t: TestServer;
let root: string;
beforeAll(async () => {
  t = await startTestServer();
  root = mkdtempSync(join(tmpdir(), 'scanhub-csr-'));
});
afterAll(async () => {
  await t.close();
  rmSync(root, { recursive: true, force: true });
});

interface Redeemed extends Provisioned {
  certificate: string;
  ca_certificate: string;
}

const USED = {
  title: 'Forbidden',
  details: 'The provisioning token is unknown, already used or expired: each token works once, within 24 hours of prepare-provisioning.',
};

/** A new gateway, prepared: its id and token. */
async function prepared(name: string): Promise<{ id: string; token: string }> {
  const gateway = await t.admin.post<{ id: string }>(`/${CUSTOMER}/gateways`, { name, usecase: 'picking', station: 'dock' });
  const { token } = await t.admin.post<{ token: string }>(`/${CUSTOMER}/gateways/${gateway.id}/prepare-provisioning`);
  return { id: gateway.id, token };
}

const redeem = (json: { token: string; csr?: string }) => call(t.url, 'POST', '/provisioning', { json });
const certificateOf = (id: string) => t.admin.get<{ serial: string; status: string }>(`/${CUSTOMER}/gateways/${id}/certificate`);
const scan = (id: string) => JSON.stringify({ id, type: 'scan', scan_code: `CSR-${id.slice(-4)}` });

/** Each certificate of the gateway by serial: revoked or not, a sealed key stored or not. */
async function certificateStates(gatewayId: string): Promise<Record<string, { revoked: boolean; sealed: boolean }>> {
  const rows = await selectRows(t, 'SELECT serial, revoked, sealed_key FROM gateway_certificates WHERE gateway_id = ?', gatewayId);
  return Object.fromEntries(rows.map((row) => [row.serial as string, { revoked: row.revoked !== null, sealed: row.sealed_key !== null }]));
}

/** What `openssl x509 -text` lists under "X509v3 extensions", as lines. */
const extensionsOf = (text: string) =>
  text
    .split('X509v3 extensions:\n')[1]!
    .split('Signature Algorithm')[0]!
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

describe.each<[DeviceKeyKind, string]>([
  ['ec-p256', 'Digital Signature'],
  ['rsa-2048', 'Digital Signature, Key Encipherment'],
])('a certificate request of an %s key made by openssl req', (kind, keyUsage) => {
  it('gets a certificate of that key (CN = thing name, our extensions), the certificates in PEM and in a PKCS#12 without a key; mosquitto_pub publishes with the device key', async () => {
    const gateway = await prepared(`csr-${kind}`);
    const pending = await certificateOf(gateway.id);
    const device = opensslDeviceKey(root, kind);
    const answer = await redeem({ token: gateway.token, csr: device.csrPem });
    expect(answer.status).toBe(200);
    const body = answer.body as Redeemed;
    expect({ ...body, gateway: body.gateway.id, pkcs12: typeof body.pkcs12, certificate: typeof body.certificate }).toEqual({
      mqtt_endpoint: `mqtts://localhost:${t.server.mqttPort}`,
      mqtt_topic_prefix: `scanhub/${CUSTOMER}`,
      certificate_common_name: gateway.id,
      gateway: gateway.id,
      pkcs12: 'string',
      certificate: 'string',
      ca_certificate: t.server.ctx.ca.certPem,
    });

    // The device's key, the service's name and extensions: the request's subject and extensions are ignored.
    const certificate = new X509Certificate(body.certificate);
    expect(certificate.checkPrivateKey(createPrivateKey(device.keyPem))).toBe(true);
    const text = opensslText(body.certificate);
    expect(text).toContain(`Subject: CN = ${gateway.id}\n`);
    expect(extensionsOf(text)).toEqual([
      'X509v3 Basic Constraints: critical',
      'CA:FALSE',
      'X509v3 Key Usage: critical',
      keyUsage,
      'X509v3 Extended Key Usage:',
      'TLS Web Client Authentication',
    ]);
    writeFileSync(join(device.dir, 'gateway.crt'), body.certificate);
    writeFileSync(join(device.dir, 'deployment-ca.crt'), t.server.ctx.ca.certPem);
    expect(execFileSync('openssl', ['verify', '-CAfile', 'deployment-ca.crt', 'gateway.crt'], { cwd: device.dir, encoding: 'utf8' })).toBe('gateway.crt: OK\n');

    // openssl pkcs12 (no -legacy): the two certificates, the gateway's labelled as the client's, and no key.
    const p12 = Buffer.from(body.pkcs12, 'base64');
    const pkcs12 = (...args: string[]) => execFileSync('openssl', ['pkcs12', '-passin', 'pass:', ...args], { input: p12, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
    const pems = (text: string) => [...text.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n/g)].map((m) => m[0]);
    expect(pems(pkcs12('-nokeys'))).toEqual([body.certificate, t.server.ctx.ca.certPem]);
    expect(pems(pkcs12('-nokeys', '-clcerts'))).toEqual([body.certificate]);
    expect(pems(pkcs12('-nokeys', '-cacerts'))).toEqual([t.server.ctx.ca.certPem]);
    expect(pkcs12('-nocerts', '-nodes')).not.toContain('PRIVATE KEY');

    // The new certificate, with its own serial, is the gateway's; the one prepared for it is revoked.
    expect(await certificateOf(gateway.id)).toMatchObject({ serial: certificate.serialNumber.toLowerCase(), status: 'active' });
    expect(pending.serial).not.toBe(certificate.serialNumber.toLowerCase());
    expect(await certificateStates(gateway.id)).toEqual({
      [certificate.serialNumber.toLowerCase()]: { revoked: false, sealed: false },
      [pending.serial]: { revoked: true, sealed: false },
    });
    const audit = await t.admin.get<{ items: { target?: { id: string }; details: unknown }[] }>(`/${CUSTOMER}/audit-log?action=gateway.provisioned`);
    expect(audit.items.filter((item) => item.target?.id === gateway.id).map((item) => item.details)).toEqual([
      { name: `csr-${kind}`, certificate_serial: certificate.serialNumber.toLowerCase(), key: 'device', revoked_serials: [pending.serial] },
    ]);

    const eventId = kind === 'ec-p256' ? 'c5e00000-0000-4000-8000-000000000001' : 'c5e00000-0000-4000-8000-000000000002';
    const topic = `${body.mqtt_topic_prefix}/gateway/${gateway.id}`;
    const published = await mosquittoPublish(device.dir, { keyPem: device.keyPem, certificatePem: body.certificate, caPem: body.ca_certificate }, { port: t.server.mqttPort, topic, message: scan(eventId) });
    expect(published).toEqual({ code: 0, stderr: '' });
    expect(await selectRows(t, 'SELECT id, gateway_id FROM events WHERE id = ?', eventId)).toEqual([{ id: eventId, gateway_id: gateway.id }]);
  });
});

describe('a certificate request that is refused: 400, and the token stays usable', () => {
  let gateway: { id: string; token: string };
  beforeAll(async () => {
    gateway = await prepared('csr-refusals');
  });

  /** A valid EC P-256 request whose signature's last byte is changed. */
  function badSignature(): string {
    const encoded = Buffer.from(der.fromPem(opensslDeviceKey(root, 'ec-p256').csrPem, 'CERTIFICATE REQUEST')!);
    encoded[encoded.length - 1]! ^= 0x01;
    return der.pem('CERTIFICATE REQUEST', encoded);
  }
  const refused = (reason: string) => ({ title: 'Bad Request', details: `Body field "csr" is refused: ${reason}.` });
  const notSigned = (key: string) => refused(`its key is ${key}: scanhub signs EC P-256 (prime256v1) and RSA 2048 keys only`);
  const notPem = refused('it is not a PEM certificate request: it must begin with "-----BEGIN CERTIFICATE REQUEST-----", as `openssl req -new` writes it');

  it.each<[string, () => string, unknown]>([
    ['a bad signature', badSignature, refused('its signature does not verify with its public key: make the request again with the key the device keeps (openssl req -new -key ...)')],
    ['an EC P-384 key', () => opensslDeviceKey(root, 'ec-p384').csrPem, notSigned('EC secp384r1')],
    ['an RSA 1024 key', () => opensslDeviceKey(root, 'rsa-1024').csrPem, notSigned('RSA 1024')],
    ['an RSA 4096 key', () => opensslDeviceKey(root, 'rsa-4096').csrPem, notSigned('RSA 4096')],
    ['an Ed25519 key', () => opensslDeviceKey(root, 'ed25519').csrPem, notSigned('ED25519')],
    ['garbage', () => 'a certificate request, honestly', notPem],
    ['a certificate instead of a request', () => t.server.ctx.ca.certPem, notPem],
    [
      'a request block that is not DER',
      () => '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n',
      refused('it is not a PKCS#10 certificate request (RFC 2986): its DER cannot be read (not one SEQUENCE)'),
    ],
    ['an oversized csr field', () => 'A'.repeat(CSR_MAX_LENGTH + 1), { title: 'Bad Request', details: `Body field "csr" must NOT have more than ${CSR_MAX_LENGTH} characters.` }],
  ])('%s', async (_name, csr, expected) => {
    const answer = await redeem({ token: gateway.token, csr: csr() });
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 400, body: expected });
    expect(await selectRows(t, 'SELECT used_at FROM provisioning_tokens WHERE gateway_id = ?', gateway.id)).toEqual([{ used_at: null }]);
  });

  it('after every refusal, the token still redeems with a good request', async () => {
    const answer = await redeem({ token: gateway.token, csr: opensslDeviceKey(root, 'ec-p256').csrPem });
    expect(answer.status).toBe(200);
    expect(await certificateOf(gateway.id)).toMatchObject({ status: 'active' });
  });
});

describe('redemptions with a certificate request', () => {
  it('two concurrent ones of one token: exactly one 200, and the certificate kept is of its key', async () => {
    const gateway = await prepared('csr-race');
    const devices = [opensslDeviceKey(root, 'ec-p256'), opensslDeviceKey(root, 'ec-p256')];
    const answers = await Promise.all(devices.map((device) => redeem({ token: gateway.token, csr: device.csrPem })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 403]);
    const won = answers.findIndex((answer) => answer.status === 200);
    expect(answers[1 - won]!.body).toEqual(USED);
    const certificate = new X509Certificate((answers[won]!.body as Redeemed).certificate);
    expect(certificate.checkPrivateKey(createPrivateKey(devices[won]!.keyPem))).toBe(true);
    expect(await certificateOf(gateway.id)).toMatchObject({ serial: certificate.serialNumber.toLowerCase(), status: 'active' });
    // The loser's certificate was signed but never stored: the prepared one and the winner's.
    expect(await selectRows(t, 'SELECT count(*) AS n FROM gateway_certificates WHERE gateway_id = ?', gateway.id)).toEqual([{ n: 2 }]);
  });

  it('with an unknown token: 403, as without a request', async () => {
    const answer = await redeem({ token: 'C'.repeat(43), csr: opensslDeviceKey(root, 'ec-p256').csrPem });
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 403, body: USED });
  });
});

describe('a pending certificate', () => {
  it('is refused at CONNECT even with its key (a database copy and the token), and accepted once the token is redeemed', async () => {
    const gateway = await prepared('pending-connect');
    const [row] = (await selectRows(t, 'SELECT serial, cert_pem, sealed_key FROM gateway_certificates WHERE gateway_id = ?', gateway.id)) as {
      serial: string;
      cert_pem: string;
      sealed_key: Buffer;
    }[];
    const key = createPrivateKey({ key: openGatewayKey(row!.sealed_key, gateway.token, row!.serial), format: 'der', type: 'pkcs8' }).export({ type: 'pkcs8', format: 'pem' }) as string;
    const endpoint = `mqtts://localhost:${t.server.mqttPort}`;
    const options = { key, cert: row!.cert_pem, ca: t.server.ctx.ca.certPem, clientId: gateway.id, protocolVersion: 4 as const, reconnectPeriod: 0, connectTimeout: 5000 };
    const before = t.server.broker.stats.pendingCertificatesRefused;
    await expect(mqtt.connectAsync(endpoint, options)).rejects.toMatchObject({ code: 5 });
    expect(t.server.broker.stats.pendingCertificatesRefused).toBe(before + 1);

    expect((await redeem({ token: gateway.token })).status).toBe(200);
    const client = await mqtt.connectAsync(endpoint, options);
    await client.endAsync(true);
  });

  it('of a token prepared before keys were sealed (its key dropped by the upgrade) redeems with a fresh key and certificate; the old one is revoked', async () => {
    const gateway = await prepared('before-sealing');
    const pending = await certificateOf(gateway.id);
    // What migrations 0017 (SQLite) and 0012 (PostgreSQL) leave of such a certificate.
    await selectRows(t, 'UPDATE gateway_certificates SET sealed_key = NULL WHERE gateway_id = ?', gateway.id);
    const answer = await redeem({ token: gateway.token });
    expect(answer.status).toBe(200);
    const provisioned = provisionedGateway(answer.body as Provisioned);
    const { key, certificates } = openPkcs12(provisioned.pkcs12);
    expect(certificates[0]!.checkPrivateKey(key)).toBe(true);
    const serial = certificates[0]!.serialNumber.toLowerCase();
    expect(serial).not.toBe(pending.serial);
    expect(await certificateOf(gateway.id)).toMatchObject({ serial, status: 'active' });
    expect(await certificateStates(gateway.id)).toEqual({ [serial]: { revoked: false, sealed: false }, [pending.serial]: { revoked: true, sealed: false } });
    const audit = await t.admin.get<{ items: { target?: { id: string }; details: unknown }[] }>(`/${CUSTOMER}/audit-log?action=gateway.provisioned`);
    expect(audit.items.filter((item) => item.target?.id === gateway.id).map((item) => item.details)).toEqual([
      { name: 'before-sealing', certificate_serial: serial, key: 'reissued', revoked_serials: [pending.serial] },
    ]);
    const client = await connectGateway(provisioned);
    await client.publishAsync(provisioned.topic, scan('c5e00000-0000-4000-8000-000000000003'), { qos: 1 });
    await client.endAsync(true);
  });
});
