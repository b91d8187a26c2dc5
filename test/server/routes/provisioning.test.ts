import { execFileSync } from 'node:child_process';
import { X509Certificate, createHash, createPrivateKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGatewayKey } from '../../../src/pki/sealed-key.js';
import { selectColumn, selectRows } from '../../helpers/store-rows.js';
import { OTHER_CUSTOMER_REFUSED, T0, by, fresh, useFixture, type Fixture } from '../../helpers/gateways.js';
import { call } from '../../helpers/http.js';
import { NO_HEADER, scenarioRows } from '../../helpers/scenarios.js';
import { lacks } from '../../helpers/users.js';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const DAY = 24 * 60 * 60 * 1000;

async function createGateway(f: Fixture, name: string, customer = 'acme', as: 'admin' | 'other' = 'admin'): Promise<string> {
  const r = await call(f.t.url, 'POST', `/${customer}/gateways`, { token: f.tokens[as], json: { name, usecase: 'inbound', station: 'dock' } });
  return (r.body as { id: string }).id;
}

async function prepare(f: Fixture, id: string): Promise<string> {
  const r = await call(f.t.url, 'POST', `/acme/gateways/${id}/prepare-provisioning`, { token: f.tokens.admin });
  expect(r.status).toBe(200);
  return (r.body as { token: string }).token;
}

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'scanhub-p12-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function openssl(args: string[]): string {
  return execFileSync('openssl', args, { cwd: scratch, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

describe('POST /{customer_id}/gateways/{gateway_id}/prepare-provisioning', () => {
  const { fixture } = useFixture();
  beforeAll(async () => {
    const f = fixture();
    f.ids.g = await createGateway(f, 'Dock 1');
    f.ids.foreign = await createGateway(f, 'Foreign', 'other', 'other');
  });

  scenarioRows(
    [
      {
        name: 'issues a token: 200 with registration_path and a 256-bit base64url token; the gateway is REGISTERING',
        method: 'POST',
        path: (f) => `/acme/gateways/${f.ids.g}/prepare-provisioning`,
        auth: by.admin,
        status: 200,
        check: async (r, f) => {
          const body = r.body as { registration_path: string; token: string; registration_url: string };
          expect(body).toEqual({ registration_path: '/provisioning', token: body.token, registration_url: `${f.t.url}/provisioning` });
          expect(body.token).toMatch(TOKEN);
          f.ids.token = body.token;
          const gateway = await call(f.t.url, 'GET', `/acme/gateways/${f.ids.g}`, { token: f.tokens.admin });
          expect((gateway.body as { connectivity_status: string }).connectivity_status).toBe('REGISTERING');
        },
      },
      {
        name: 'stores only the SHA-256 of the token, and the certificate with its key sealed under the token until redemption',
        method: 'GET',
        path: (f) => `/acme/gateways/${f.ids.g}`,
        auth: by.admin,
        status: 200,
        check: async (_r, f) => {
          const tokens = await selectRows(f.t, 'SELECT token_hash, gateway_id, expires_at, used_at FROM provisioning_tokens');
          expect(tokens).toEqual([
            { token_hash: createHash('sha256').update(f.ids.token!).digest('hex'), gateway_id: f.ids.g, expires_at: T0 + DAY, used_at: null },
          ]);
          const [certificate] = (await selectRows(f.t, 'SELECT serial, common_name, cert_pem, sealed_key FROM gateway_certificates')) as unknown as {
            serial: string;
            common_name: string;
            cert_pem: string;
            sealed_key: Buffer;
          }[];
          expect(certificate!.common_name).toBe(f.ids.g);
          const x509 = new X509Certificate(certificate!.cert_pem);
          expect(x509.subject).toBe(`CN=${f.ids.g}`);
          // AES-256-GCM of the PKCS#8 key (version, nonce, tag, ciphertext): nothing of a PEM key, and only the token opens it.
          expect(certificate!.sealed_key.includes('PRIVATE KEY')).toBe(false);
          const key = createPrivateKey({ key: openGatewayKey(certificate!.sealed_key, f.ids.token!, certificate!.serial), format: 'der', type: 'pkcs8' });
          expect(x509.checkPrivateKey(key)).toBe(true);
          expect(() => openGatewayKey(certificate!.sealed_key, 'B'.repeat(43), certificate!.serial)).toThrow(`the token does not open the sealed key of certificate ${certificate!.serial}`);
        },
      },
      {
        name: 'a second call: 403 saying it was already prepared',
        method: 'POST',
        path: (f) => `/acme/gateways/${f.ids.g}/prepare-provisioning`,
        auth: by.admin,
        status: 403,
        body: (f: Fixture) => ({
          title: 'Forbidden',
          details: `Gateway "${f.ids.g}" was already prepared for provisioning at ${new Date(T0).toISOString()}; a gateway is prepared only once: create a new gateway for another device.`,
        }),
      },
      {
        name: 'an unknown gateway: 403 (spec: access denied or gateway does not exist)',
        method: 'POST',
        path: '/acme/gateways/5d0b8a52-8f57-4a3e-9a3c-7c2b3f7e9d10/prepare-provisioning',
        auth: by.admin,
        status: 403,
        body: { title: 'Forbidden', details: 'Gateway "5d0b8a52-8f57-4a3e-9a3c-7c2b3f7e9d10" does not exist.' },
      },
      {
        name: "another customer's gateway on our path: 403",
        method: 'POST',
        path: (f) => `/acme/gateways/${f.ids.foreign}/prepare-provisioning`,
        auth: by.admin,
        status: 403,
        body: (f: Fixture) => ({ title: 'Forbidden', details: `Gateway "${f.ids.foreign}" does not exist.` }),
      },
      { name: "another customer's path: 403", method: 'POST', path: (f) => `/acme/gateways/${f.ids.g}/prepare-provisioning`, auth: by.other, status: 403, body: OTHER_CUSTOMER_REFUSED },
      { name: 'USER_ROLE lacks gateway.provision: 403', method: 'POST', path: (f) => `/acme/gateways/${f.ids.g}/prepare-provisioning`, auth: by.user, status: 403, body: lacks('gateway.provision') },
      { name: 'no Authorization: 401', method: 'POST', path: (f) => `/acme/gateways/${f.ids.g}/prepare-provisioning`, status: 401, body: NO_HEADER },
    ],
    fixture,
  );

  it('two concurrent calls for one gateway: exactly one 200, the other 403', async () => {
    const f = fixture();
    const id = await createGateway(f, 'Race');
    const results = await Promise.all([1, 2].map(() => call(f.t.url, 'POST', `/acme/gateways/${id}/prepare-provisioning`, { token: f.tokens.admin })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 403]);
    expect((await selectColumn(f.t.server, 'SELECT count(*) FROM provisioning_tokens WHERE gateway_id = ?', id))[0]).toBe(1);
  });
});

describe('POST /provisioning', () => {
  const { fixture, clock } = useFixture();
  beforeAll(async () => {
    const f = fixture();
    f.ids.g = await createGateway(f, 'Dock 1');
    f.ids.token = await prepare(f, f.ids.g);
  });
  const used = { title: 'Forbidden', details: 'The provisioning token is unknown, already used or expired: each token works once, within 24 hours of prepare-provisioning.' };

  scenarioRows(
    [
      { name: 'no token field: 400', method: 'POST', path: '/provisioning', json: {}, status: 400, body: { title: 'Bad Request', details: 'Missing body field "token".' } },
      { name: 'an unknown token: 403', method: 'POST', path: '/provisioning', json: { token: 'A'.repeat(43) }, status: 403, body: used },
      {
        name: 'the token, without Authorization: 200 with MQTT details, the gateway and a PKCS#12',
        method: 'POST',
        path: '/provisioning',
        json: (f: Fixture) => ({ token: f.ids.token }),
        status: 200,
        check: (r, f) => {
          const body = r.body as { mqtt_endpoint: string; mqtt_topic_prefix: string; certificate_common_name: string; gateway: unknown; pkcs12: string; certificate: string };
          expect({ ...body, pkcs12: typeof body.pkcs12, certificate: typeof body.certificate }).toEqual({
            mqtt_endpoint: `mqtts://localhost:${f.t.server.ctx.config.mqttPort}`,
            mqtt_topic_prefix: 'scanhub/acme',
            certificate_common_name: f.ids.g,
            gateway: { ...fresh(f.ids.g!, 'Dock 1', 'inbound', 'dock'), connectivity_status: 'REGISTERING', provisioned: T0 },
            pkcs12: 'string',
            certificate: 'string',
            ca_certificate: f.t.server.ctx.ca.certPem,
          });
          expect(new X509Certificate(body.certificate).subject).toBe(`CN=${f.ids.g}`);
          f.ids.pkcs12 = body.pkcs12;
          f.ids.certificate = body.certificate;
        },
      },
      {
        name: 'the PKCS#12 opens with openssl (empty password, no -legacy) and its certificate chains to the CA',
        method: 'GET',
        path: '/healthz',
        status: 200,
        check: (_r, f) => {
          writeFileSync(join(scratch, 'gw.p12'), Buffer.from(f.ids.pkcs12!, 'base64'));
          const pem = openssl(['pkcs12', '-in', 'gw.p12', '-passin', 'pass:', '-nodes']);
          expect(pem).toContain('-----BEGIN PRIVATE KEY-----');
          const certs = [...pem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n/g)].map((m) => m[0]);
          expect(certs).toHaveLength(2);
          // The bundle's certificates are the PEM ones of the answer.
          expect(certs).toEqual([f.ids.certificate, f.t.server.ctx.ca.certPem]);
          writeFileSync(join(scratch, 'gw.crt'), certs[0]!);
          writeFileSync(join(scratch, 'ca.crt'), certs[1]!);
          // Chains to the CA the deployment keeps (its secrets), not just to the one in the bundle.
          writeFileSync(join(scratch, 'deployment-ca.crt'), f.t.server.ctx.ca.certPem);
          expect(openssl(['verify', '-CAfile', 'deployment-ca.crt', 'gw.crt'])).toBe('gw.crt: OK\n');
          expect(new X509Certificate(certs[0]!).subject).toBe(`CN=${f.ids.g}`);
          expect(() => createSecureContext({ pfx: Buffer.from(f.ids.pkcs12!, 'base64'), passphrase: '' })).not.toThrow();
        },
      },
      {
        name: 'the stored private key is gone after redemption',
        method: 'GET',
        path: '/healthz',
        status: 200,
        check: async (_r, f) => {
          const row = (await selectRows(f.t.server, 'SELECT sealed_key, delivered_at FROM gateway_certificates WHERE gateway_id = ?', f.ids.g))[0];
          expect(row).toEqual({ sealed_key: null, delivered_at: T0 });
        },
      },
      { name: 'the same token again: 403', method: 'POST', path: '/provisioning', json: (f: Fixture) => ({ token: f.ids.token }), status: 403, body: used },
    ],
    fixture,
  );

  it('an expired token: 403 one millisecond after 24 hours, and still usable just before', async () => {
    const f = fixture();
    const [early, late] = [await createGateway(f, 'Early'), await createGateway(f, 'Late')];
    const [earlyToken, lateToken] = [await prepare(f, early), await prepare(f, late)];
    try {
      clock.now = T0 + DAY - 1;
      expect((await call(f.t.url, 'POST', '/provisioning', { json: { token: earlyToken } })).status).toBe(200);
      clock.now = T0 + DAY;
      expect(await call(f.t.url, 'POST', '/provisioning', { json: { token: lateToken } })).toMatchObject({ status: 403, body: used });
    } finally {
      clock.now = T0;
    }
  });

  it('two concurrent redemptions of one token: exactly one 200', async () => {
    const f = fixture();
    const token = await prepare(f, await createGateway(f, 'Raced'));
    const results = await Promise.all(Array.from({ length: 4 }, () => call(f.t.url, 'POST', '/provisioning', { json: { token } })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 403, 403, 403]);
    for (const r of results.filter((r) => r.status === 403)) expect(r.body).toEqual(used);
  });

  it('a gateway deleted after preparation: 403, and the token stays unused', async () => {
    const f = fixture();
    const id = await createGateway(f, 'Doomed');
    const token = await prepare(f, id);
    expect((await call(f.t.url, 'DELETE', `/acme/gateways/${id}`, { token: f.tokens.admin })).status).toBe(204);
    expect(await call(f.t.url, 'POST', '/provisioning', { json: { token } })).toMatchObject({
      status: 403,
      body: { title: 'Forbidden', details: 'The gateway of this provisioning token does not exist any more.' },
    });
    expect((await selectColumn(f.t.server, 'SELECT used_at FROM provisioning_tokens WHERE gateway_id = ?', id))[0]).toBeNull();
  });
});
