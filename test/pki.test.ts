import { execFile, execFileSync } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueClientCertificate, issueServerCertificate, loadOrCreateCa, randomSerialHex } from '../src/pki/ca.js';
import { buildPkcs12 } from '../src/pki/pkcs12.js';
import { FileSecrets } from '../src/store/sqlite/secrets.js';

/** The CA of a data directory (SQLite mode keeps it in pki/). */
const caOf = (dataDir: string) => loadOrCreateCa(new FileSecrets(dataDir));

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'scanhub-pki-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function openssl(args: string[]): string {
  return execFileSync('openssl', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

describe('deployment CA', () => {
  it('is created once with a private key of mode 0600 and reused afterwards', async () => {
    const ca = (await caOf(dir));
    expect(statSync(join(dir, 'pki', 'ca.key')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8')).toBe(ca.certPem);
    expect((await caOf(dir))).toEqual(ca);
    const cert = new X509Certificate(ca.certPem);
    expect(cert.ca).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(ca.keyPem))).toBe(true);
  });

  it('ends up as one CA when two processes create it at the same moment', async () => {
    const script = `import('${join(process.cwd(), 'dist/pki/ca.js')}').then((m) => import('${join(process.cwd(), 'dist/store/sqlite/secrets.js')}').then((s) => m.loadOrCreateCa(new s.FileSecrets(process.argv[1]))).then((ca) => process.stdout.write(ca.certPem)))`;
    const run = () => promisify(execFile)(process.execPath, ['-e', script, dir]);
    const [a, b] = await Promise.all([run(), run()]);
    expect(a.stdout).toContain('BEGIN CERTIFICATE');
    expect(a.stdout).toBe(b.stdout);
    expect((await caOf(dir)).certPem).toBe(a.stdout);
  });
});

describe('client certificates', () => {
  it('carry CN = thing name, the serial, clientAuth, and chain to the CA', async () => {
    const ca = (await caOf(dir));
    const client = issueClientCertificate(ca, '6f1c1c1e-0d4e-4d0e-9a51-1f3b2f0a7c11', '0a1b2c3d4e5f');
    writeFileSync(join(dir, 'client.crt'), client.certPem);
    expect(openssl(['verify', '-CAfile', 'pki/ca.crt', 'client.crt'])).toBe('client.crt: OK\n');
    const cert = new X509Certificate(client.certPem);
    expect(cert.subject).toBe('CN=6f1c1c1e-0d4e-4d0e-9a51-1f3b2f0a7c11');
    expect(cert.serialNumber).toBe('0A1B2C3D4E5F');
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(cert.ca).toBe(false);
    expect(createPrivateKey(client.keyPem).asymmetricKeyDetails?.modulusLength).toBe(2048);
  });

  it('keeps a serial with its top bit set positive', async () => {
    const ca = (await caOf(dir));
    const client = issueClientCertificate(ca, 'gw', 'ff00');
    writeFileSync(join(dir, 'client.crt'), client.certPem);
    // A negative INTEGER would print as serial=-0100.
    expect(openssl(['x509', '-in', 'client.crt', '-noout', '-serial'])).toBe('serial=FF00\n');
  });

  it('gets distinct random serials', async () => {
    const serials = new Set(Array.from({ length: 50 }, () => randomSerialHex()));
    expect(serials.size).toBe(50);
    for (const serial of serials) expect(serial).toMatch(/^[0-7][0-9a-f]{31}$/);
  });
});

describe('PKCS#12', () => {
  it('opens with openssl pkcs12 and an empty password without -legacy, and loads in Node tls', async () => {
    const ca = (await caOf(dir));
    const client = issueClientCertificate(ca, 'gateway-1', randomSerialHex());
    const pfx = buildPkcs12(client.keyPem, client.certPem, ca.certPem);
    writeFileSync(join(dir, 'f.p12'), pfx);

    const pem = openssl(['pkcs12', '-in', 'f.p12', '-passin', 'pass:', '-nodes']);
    const certs = [...pem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n/g)].map((m) => m[0]);
    expect(certs).toEqual([client.certPem.replace(/\r\n/g, '\n'), ca.certPem.replace(/\r\n/g, '\n')]);
    const key = /-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----\n/.exec(pem)![0];
    expect(createPrivateKey(key).export({ format: 'der', type: 'pkcs8' })).toEqual(
      createPrivateKey(client.keyPem).export({ format: 'der', type: 'pkcs8' }),
    );
    expect(() => createSecureContext({ pfx, passphrase: '' })).not.toThrow();
  });

  it('encrypts the key with AES-256 (PBES2), not RC2 or 3DES', async () => {
    const ca = (await caOf(dir));
    const client = issueClientCertificate(ca, 'gateway-1', randomSerialHex());
    writeFileSync(join(dir, 'f.p12'), buildPkcs12(client.keyPem, client.certPem, ca.certPem));
    const result = execFileSync('sh', ['-c', 'openssl pkcs12 -in f.p12 -passin pass: -info -noout 2>&1'], { cwd: dir, encoding: 'utf8' });
    expect(result).toContain('Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC');
    expect(result).not.toMatch(/RC2|3DES|DES-EDE/);
  });
});

describe('server certificate', () => {
  it('covers every host plus localhost and 127.0.0.1, as DNS or IP names', async () => {
    const ca = (await caOf(dir));
    const server = issueServerCertificate(ca, dir, ['mqtt.example.com', '10.1.2.3']);
    const cert = new X509Certificate(server.certPem);
    expect(cert.subjectAltName).toBe('DNS:mqtt.example.com, IP Address:10.1.2.3, DNS:localhost, IP Address:127.0.0.1');
    expect(cert.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
    expect(cert.checkHost('mqtt.example.com')).toBe('mqtt.example.com');
    expect(cert.checkIP('10.1.2.3')).toBe('10.1.2.3');
    expect(readFileSync(join(dir, 'pki', 'server.crt'), 'utf8')).toBe(server.certPem);
    expect(statSync(join(dir, 'pki', 'server.key')).mode & 0o777).toBe(0o600);
  });

  it('is reused while it covers the hosts and reissued when a host is new', async () => {
    const ca = (await caOf(dir));
    const first = issueServerCertificate(ca, dir, ['mqtt.example.com']);
    expect(issueServerCertificate(ca, dir, ['MQTT.example.com', 'localhost'])).toEqual(first);
    const second = issueServerCertificate(ca, dir, ['mqtt.example.com', '::1']);
    expect(second.certPem).not.toBe(first.certPem);
    expect(new X509Certificate(second.certPem).subjectAltName).toBe(
      'DNS:mqtt.example.com, IP Address:0:0:0:0:0:0:0:1, DNS:localhost, IP Address:127.0.0.1',
    );
  });
});
