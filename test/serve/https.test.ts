import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type DetailedPeerCertificate } from 'node:tls';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { connectGateway, type Provisioned, type TestGateway } from '../helpers/mqtt.js';
import { freePort, spawnServe, stop, type ServeProcess } from '../helpers/serve-process.js';
import { TEST_STORE, testDatabase, type TestDatabase } from '../helpers/test-store.js';

const ADMIN_PASSWORD = 'https-admin-password';
const started: ServeProcess[] = [];
const databases: TestDatabase[] = [];
let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'scanhub-https-'));
  makePairs();
});
afterEach(async () => {
  await Promise.all(started.splice(0).map(stop));
  await Promise.all(databases.splice(0).map((database) => database.drop()));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const file = (name: string) => join(work, name);
const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] }).toString();

/** A test CA (not the deployment's) and two server pairs it signed for 127.0.0.1: a.crt/a.key and b.crt/b.key. */
function makePairs(): void {
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'test-ca.key', '-out', 'test-ca.crt', '-days', '2', '-subj', '/CN=scanhub test CA']);
  writeFileSync(file('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  for (const name of ['a', 'b']) {
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=pair ${name}`]);
    openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'test-ca.crt', '-CAkey', 'test-ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', 'san.ext']);
  }
  writeFileSync(file('garbage.crt'), '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n');
  writeFileSync(file('garbage.key'), 'not a key\n');
}

/** The SHA-256 fingerprint openssl computes for a PEM certificate file. */
const opensslFingerprint = (path: string) => openssl(['x509', '-in', path, '-noout', '-fingerprint', '-sha256']).trim().replace(/^sha256 Fingerprint=/i, '');

/** A fresh TLS connection's view of the server: its certificate's fingerprint once the chain verified against `ca`. */
function peerFingerprint(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, ca }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.end();
    });
    socket.once('error', reject);
  });
}

/** The fingerprints of the chain the server sends, its own certificate first (nothing verified). */
function servedChain(port: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const chain: string[] = [];
      let certificate: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
      while (certificate?.fingerprint256 && !chain.includes(certificate.fingerprint256)) {
        chain.push(certificate.fingerprint256);
        certificate = certificate.issuerCertificate;
      }
      resolve(chain);
      socket.end();
    });
    socket.once('error', reject);
  });
}

/** Starts `serve` with `flags` on free ports on the test store and waits for its ready line. */
async function serve(flags: string[]) {
  const database = await testDatabase();
  databases.push(database);
  const dataDir = join(mkdtempSync(join(work, 'serve-')), 'data');
  const port = await freePort();
  const process = spawnServe(['--data-dir', dataDir, '--port', String(port), '--mqtt-port', '0', ...flags], { SCANHUB_ADMIN_PASSWORD: ADMIN_PASSWORD }, database);
  started.push(process);
  const [, url] = (await process.stderrMatches(/scanhub is serving (\S+) /)) ?? [];
  return { process, url: url!, port, dataDir, database };
}

/** Logs in, creates a gateway and redeems its provisioning token over HTTPS, as a technician and device would. */
async function provisionOverHttps(url: string, dispatcher: Agent): Promise<TestGateway & { registrationUrl: string }> {
  const login = await call(url, 'POST', '/auth/login', { json: { email: 'admin@localhost', password: ADMIN_PASSWORD }, dispatcher });
  const token = (login.body as { id_token: string }).id_token;
  const gateway = (await call(url, 'POST', '/default/gateways', { token, json: { name: 'dock-1', usecase: 'picking', station: 's1' }, dispatcher })).body as { id: string };
  const preparation = (await call(url, 'POST', `/default/gateways/${gateway.id}/prepare-provisioning`, { token, dispatcher })).body as {
    registration_path: string;
    registration_url: string;
    token: string;
  };
  const provisioned = (await call(url, 'POST', preparation.registration_path, { json: { token: preparation.token }, dispatcher })).body as Provisioned;
  return {
    id: gateway.id,
    topic: `${provisioned.mqtt_topic_prefix}/gateway/${gateway.id}`,
    endpoint: provisioned.mqtt_endpoint,
    pkcs12: Buffer.from(provisioned.pkcs12, 'base64'),
    registrationUrl: preparation.registration_url,
  };
}

describe('serve --https: a certificate of the deployment CA', () => {
  it('serves the API over HTTPS that verifies against the CA `operator ca` prints; links follow the scheme', async () => {
    const { url, port, dataDir, database } = await serve(['--https']);
    expect(url).toBe(`https://127.0.0.1:${port}`);

    const ca = await runCli(['operator', 'ca', '--data-dir', dataDir, ...database.args], { env: database.env });
    expect(ca.code).toBe(0);
    expect(ca.stdout).toMatch(/^-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----\r?\n$/);
    writeFileSync(join(dataDir, '..', 'ca.pem'), ca.stdout);
    expect(ca.stderr).toBe(`SHA-256 fingerprint: ${opensslFingerprint(join(dataDir, '..', 'ca.pem'))}\n`);

    const trusting = new Agent({ connect: { ca: ca.stdout } });
    const health = await call(url, 'GET', '/healthz', { dispatcher: trusting });
    expect({ status: health.status, state: (health.body as { status: string }).status }).toEqual({ status: 200, state: 'ok' });
    expect(health.headers['strict-transport-security']).toBe('max-age=31536000');
    // Without the CA, the chain does not verify.
    await expect(call(url, 'GET', '/healthz')).rejects.toMatchObject({ code: 'SELF_SIGNED_CERT_IN_CHAIN' });

    // The chain ends with the deployment CA: a client not trusting it yet can show its fingerprint.
    expect(await servedChain(port)).toEqual([opensslFingerprint(join(dataDir, 'pki', 'https.crt')), opensslFingerprint(join(dataDir, '..', 'ca.pem'))]);

    const gateway = await provisionOverHttps(url, trusting);
    expect(gateway.registrationUrl).toBe(`https://127.0.0.1:${port}/provisioning`);
    await trusting.close();
  });

  it('SCANHUB_HTTPS=1 does the same; a value that is no switch: exit 2', async () => {
    const database = await testDatabase();
    databases.push(database);
    const port = await freePort();
    const dataDir = join(mkdtempSync(join(work, 'env-')), 'data');
    const on = spawnServe(['--data-dir', dataDir, '--port', String(port), '--mqtt-port', '0'], { SCANHUB_HTTPS: 'yes', SCANHUB_ADMIN_PASSWORD: ADMIN_PASSWORD }, database);
    started.push(on);
    expect((await on.stderrMatches(/scanhub is serving (\S+) /))[1]).toBe(`https://127.0.0.1:${port}`);

    const bad = spawnServe(['--data-dir', join(work, 'never'), '--port', String(await freePort())], { SCANHUB_HTTPS: 'maybe' });
    expect(await bad.exited).toEqual({ code: 2, signal: null });
    expect(bad.stderr()).toBe('scanhub: SCANHUB_HTTPS: "maybe" is neither 1/true/yes/on nor 0/false/no/off\n');
  });
});

describe('operator ca before the first start', () => {
  it('prints nothing: no database (SQLite, exit 2) or no CA yet (PostgreSQL, exit 1)', async () => {
    const database = await testDatabase();
    databases.push(database);
    const dataDir = join(work, 'not-started');
    const result = await runCli(['operator', 'ca', '--data-dir', dataDir, ...database.args], { env: database.env });
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual(
      TEST_STORE === 'sqlite'
        ? { code: 2, stdout: '', stderr: `scanhub: no scanhub database in ${dataDir}: start \`scanhub serve --data-dir ${dataDir}\` once to create it\n` }
        : { code: 1, stdout: '', stderr: 'scanhub: this deployment has no CA yet: start `scanhub serve` once to create it\n' },
    );
  });
});

describe('serve --tls-cert/--tls-key', () => {
  it('serves that pair; SIGHUP serves a new pair to new connections while the MQTT connection stays up; bad files on SIGHUP keep the pair', async () => {
    copyFileSync(file('a.crt'), file('live.crt'));
    copyFileSync(file('a.key'), file('live.key'));
    const { process, url, port } = await serve(['--tls-cert', file('live.crt'), '--tls-key', file('live.key')]);
    expect(url).toBe(`https://127.0.0.1:${port}`);
    const testCa = readFileSync(file('test-ca.crt'), 'utf8');
    expect(await peerFingerprint(port, testCa)).toBe(opensslFingerprint(file('a.crt')));

    const trusting = new Agent({ connect: { ca: testCa } });
    expect((await call(url, 'GET', '/healthz', { dispatcher: trusting })).status).toBe(200);
    const gateway = await provisionOverHttps(url, trusting);
    await trusting.close();
    const client = await connectGateway(gateway);
    let closed = false;
    client.on('close', () => (closed = true));

    copyFileSync(file('b.crt'), file('live.crt'));
    copyFileSync(file('b.key'), file('live.key'));
    process.child.kill('SIGHUP');
    await process.stderrMatches(/Reloaded the TLS certificate from .*\n/);
    expect(process.stderr()).toContain(`Reloaded the TLS certificate from ${file('live.crt')}.\n`);
    expect(await peerFingerprint(port, testCa)).toBe(opensslFingerprint(file('b.crt')));
    // The gateway's connection was never dropped: it still publishes with QoS 1 (acknowledged).
    await client.publishAsync(gateway.topic, JSON.stringify({ type: 'scan', created: Date.now(), scanned: 'after-reload' }), { qos: 1 });
    expect({ connected: client.connected, closed }).toEqual({ connected: true, closed: false });

    copyFileSync(file('garbage.key'), file('live.key'));
    process.child.kill('SIGHUP');
    const [line] = await process.stderrMatches(/scanhub: TLS certificate not reloaded.*\n/);
    expect(line).toBe(`scanhub: TLS certificate not reloaded, still serving the previous one: --tls-key: "${file('live.key')}" is not a PEM private key (unencrypted)\n`);
    expect(await peerFingerprint(port, testCa)).toBe(opensslFingerprint(file('b.crt')));
    expect(client.connected).toBe(true);
    await client.endAsync();
  });

  it.each([
    ['a certificate file that does not exist', ['--tls-cert', 'missing.crt', '--tls-key', 'a.key'], () => `scanhub: --tls-cert: "${file('missing.crt')}" does not exist\n`],
    ['a key file that does not exist', ['--tls-cert', 'a.crt', '--tls-key', 'missing.key'], () => `scanhub: --tls-key: "${file('missing.key')}" does not exist\n`],
    ['a key that is not the certificate\'s', ['--tls-cert', 'a.crt', '--tls-key', 'b.key'], () => `scanhub: --tls-key: "${file('b.key')}" does not match the certificate in "${file('a.crt')}"\n`],
    ['a malformed certificate', ['--tls-cert', 'garbage.crt', '--tls-key', 'a.key'], () => `scanhub: --tls-cert: "${file('garbage.crt')}" is not a PEM certificate\n`],
    ['a key file given as the certificate', ['--tls-cert', 'a.key', '--tls-key', 'a.key'], () => `scanhub: --tls-cert: "${file('a.key')}" is not a PEM certificate\n`],
    ['a malformed key', ['--tls-cert', 'a.crt', '--tls-key', 'garbage.key'], () => `scanhub: --tls-key: "${file('garbage.key')}" is not a PEM private key (unencrypted)\n`],
    ['--tls-cert alone', ['--tls-cert', 'a.crt'], () => 'scanhub: --tls-cert and --tls-key go together: give both files (or --https for a certificate of the deployment CA)\n'],
    ['--tls-key alone', ['--tls-key', 'a.key'], () => 'scanhub: --tls-cert and --tls-key go together: give both files (or --https for a certificate of the deployment CA)\n'],
  ])('%s: one line, exit 2, before anything is created', async (_name, flags, message) => {
    const dataDir = join(work, `never-${Math.random().toString(36).slice(2)}`);
    const absolute = flags.map((flag) => (flag.startsWith('--') ? flag : file(flag)));
    const process = spawnServe(['--data-dir', dataDir, '--port', String(await freePort()), '--mqtt-port', '0', ...absolute]);
    expect(await process.exited).toEqual({ code: 2, signal: null });
    expect(process.stderr()).toBe(message());
    expect(existsSync(dataDir)).toBe(false);
  });

  it('SCANHUB_TLS_CERT and SCANHUB_TLS_KEY name the pair', async () => {
    const port = await freePort();
    const process = spawnServe(['--data-dir', join(mkdtempSync(join(work, 'envpair-')), 'data'), '--port', String(port), '--mqtt-port', '0'], {
      SCANHUB_TLS_CERT: file('a.crt'),
      SCANHUB_TLS_KEY: file('a.key'),
    });
    started.push(process);
    await process.stderrMatches(/scanhub is serving /);
    expect(await peerFingerprint(port, readFileSync(file('test-ca.crt'), 'utf8'))).toBe(opensslFingerprint(file('a.crt')));
  });
});

describe('plain HTTP beyond loopback', () => {
  const warning = 'warning: the API listens on 0.0.0.0 over plain HTTP, so passwords, tokens and gateway keys cross the network in clear text: serve HTTPS with --tls-cert/--tls-key or --https.\n';

  it('--host 0.0.0.0 without TLS warns naming both options; with --https it does not; on loopback it does not', async () => {
    const open = await serve(['--host', '0.0.0.0', '--public-url', 'http://scanhub.test', '--mqtt-public-host', 'scanhub.test']);
    expect((await open.process.stderrMatches(/warning: .*\n/))[0]).toBe(warning);
    const secure = await serve(['--host', '0.0.0.0', '--public-url', 'https://api.scanhub.test', '--mqtt-public-host', 'mqtt.scanhub.test', '--https']);
    // The deployment CA's certificate names every host clients use (never 0.0.0.0), kept in the data directory.
    const issued = new X509Certificate(readFileSync(join(secure.dataDir, 'pki', 'https.crt')));
    expect(issued.subjectAltName).toBe('DNS:api.scanhub.test, DNS:mqtt.scanhub.test, DNS:localhost, IP Address:127.0.0.1');
    const local = await serve([]);
    // Stopped, every line it printed has arrived.
    expect(await stop(secure.process)).toEqual({ code: 0, signal: null });
    expect(await stop(local.process)).toEqual({ code: 0, signal: null });
    expect(secure.process.stderr()).not.toContain('warning:');
    expect(local.process.stderr()).not.toContain('warning:');
  });
});
