import { execFile, execFileSync } from 'node:child_process';
import { X509Certificate, createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueClientCertificate, issueClientCertificateAsync, issueClientCertificateForKeyAsync, issueServerCertificate, loadOrCreateCa, randomSerialHex } from '../../src/pki/ca.js';
import { createCertificateRequest, readCertificateRequest } from '../../src/pki/csr.js';
import * as der from '../../src/pki/der.js';
import { KEY_TYPES, generateKeys, keyTypeOf } from '../../src/pki/keys.js';
import { buildPkcs12 } from '../../src/pki/pkcs12.js';
import { openGatewayKey, sealGatewayKey } from '../../src/pki/sealed-key.js';
import { FileSecrets } from '../../src/store/sqlite/secrets.js';
import { readFixture } from '../helpers/fixtures.js';
import { openPkcs12 } from '../helpers/pkcs12.js';

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

describe.each(KEY_TYPES)('client certificates (%s)', (keyType) => {
  it('carry CN = thing name, the serial, clientAuth, a key of the type, and chain to the CA', async () => {
    const ca = await caOf(dir);
    const client = issueClientCertificate(ca, '6f1c1c1e-0d4e-4d0e-9a51-1f3b2f0a7c11', '0a1b2c3d4e5f', { keyType });
    writeFileSync(join(dir, 'client.crt'), client.certPem);
    expect(openssl(['verify', '-CAfile', 'pki/ca.crt', 'client.crt'])).toBe('client.crt: OK\n');
    const cert = new X509Certificate(client.certPem);
    expect(cert.subject).toBe('CN=6f1c1c1e-0d4e-4d0e-9a51-1f3b2f0a7c11');
    expect(cert.issuer).toBe('CN=scanhub deployment CA\nO=scanhub');
    expect(cert.serialNumber).toBe('0A1B2C3D4E5F');
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(cert.ca).toBe(false);
    expect(cert.checkPrivateKey(createPrivateKey(client.keyPem))).toBe(true);
    expect(keyTypeOf(createPrivateKey(client.keyPem))).toBe(keyType);
    const text = openssl(['x509', '-in', 'client.crt', '-noout', '-text']);
    expect(text).toContain('Signature Algorithm: sha256WithRSAEncryption');
    expect(text).toContain(keyType === 'ec-p256' ? 'ASN1 OID: prime256v1' : 'Public-Key: (2048 bit)');
    // ECDSA keys sign; an RSA key may also be used for RSA key exchange.
    expect(text).toMatch(keyType === 'ec-p256' ? /Key Usage: critical\n\s+Digital Signature\n/ : /Key Usage: critical\n\s+Digital Signature, Key Encipherment\n/);
  });

  it('are the same made on the thread pool', async () => {
    const ca = await caOf(dir);
    const client = await issueClientCertificateAsync(ca, 'gw-async', '7f01', keyType);
    writeFileSync(join(dir, 'client.crt'), client.certPem);
    expect(openssl(['verify', '-CAfile', 'pki/ca.crt', 'client.crt'])).toBe('client.crt: OK\n');
    expect(keyTypeOf(new X509Certificate(client.certPem).publicKey)).toBe(keyType);
  });

  it('keep a serial with its top bit set positive', async () => {
    const ca = await caOf(dir);
    const client = issueClientCertificate(ca, 'gw', 'ff00', { keyType });
    writeFileSync(join(dir, 'client.crt'), client.certPem);
    // A negative INTEGER would print as serial=-0100.
    expect(openssl(['x509', '-in', 'client.crt', '-noout', '-serial'])).toBe('serial=FF00\n');
  });
});

describe('serials', () => {
  it('are distinct and random', async () => {
    const serials = new Set(Array.from({ length: 50 }, () => randomSerialHex()));
    expect(serials.size).toBe(50);
    for (const serial of serials) expect(serial).toMatch(/^[0-7][0-9a-f]{31}$/);
  });
});

describe('a CA made before this version (node-forge)', () => {
  const fixture = (name: string) => readFixture(`forge-ca/${name}`);

  it('signs new EC and RSA certificates that chain to it', async () => {
    mkdirSync(join(dir, 'pki'));
    writeFileSync(join(dir, 'pki', 'ca.key'), fixture('ca.key'), { mode: 0o600 });
    writeFileSync(join(dir, 'pki', 'ca.crt'), fixture('ca.crt'), { mode: 0o600 });
    const ca = await caOf(dir);
    expect(ca.certPem).toBe(fixture('ca.crt'));
    for (const keyType of KEY_TYPES) {
      writeFileSync(join(dir, `${keyType}.crt`), issueClientCertificate(ca, 'gw', randomSerialHex(), { keyType }).certPem);
      expect(openssl(['verify', '-CAfile', 'pki/ca.crt', `${keyType}.crt`])).toBe(`${keyType}.crt: OK\n`);
    }
    writeFileSync(join(dir, 'old.crt'), fixture('gateway.crt'));
    expect(openssl(['verify', '-CAfile', 'pki/ca.crt', 'old.crt'])).toBe('old.crt: OK\n');
  });
});

describe.each(KEY_TYPES)('PKCS#12 (%s)', (keyType) => {
  it('opens with openssl pkcs12 and an empty password without -legacy, and loads in Node tls', async () => {
    const ca = await caOf(dir);
    const client = issueClientCertificate(ca, 'gateway-1', randomSerialHex(), { keyType });
    const pfx = buildPkcs12(client.keyPem, client.certPem, ca.certPem, 'gateway-1');
    const opened = openPkcs12(pfx);
    expect(opened.certificatePems).toEqual([client.certPem, ca.certPem]);
    expect(opened.key.export({ format: 'der', type: 'pkcs8' })).toEqual(createPrivateKey(client.keyPem).export({ format: 'der', type: 'pkcs8' }));
    expect(() => createSecureContext({ pfx, passphrase: '' })).not.toThrow();
  });

  it('is written as OpenSSL 3 writes one by default: PBES2 AES-256-CBC, HMAC-SHA256 MAC, 2048 iterations; key and certificate labelled', async () => {
    const ca = await caOf(dir);
    const client = issueClientCertificate(ca, 'gateway-1', randomSerialHex(), { keyType });
    const { info, text } = openPkcs12(buildPkcs12(client.keyPem, client.certPem, ca.certPem, 'gateway-1'));
    expect(info).toContain('MAC: sha256, Iteration 2048\nMAC length: 32, salt length: 8\n');
    expect(info).toContain('PKCS7 Encrypted data: PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256\n');
    expect(info).toContain('Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256\n');
    expect(info).not.toMatch(/RC2|3DES|DES-EDE/);
    const localKeyId = createHash('sha1').update(new X509Certificate(client.certPem).raw).digest('hex').toUpperCase().replace(/(..)(?!$)/g, '$1 ');
    // Both the key and its certificate carry the name and the same localKeyID (how readers pair them).
    expect(text.split(`Bag Attributes\n    friendlyName: gateway-1\n    localKeyID: ${localKeyId} \n`)).toHaveLength(3);
  });

  it('agrees with a file openssl pkcs12 -export writes from the same key and certificates', async () => {
    const ca = await caOf(dir);
    const client = issueClientCertificate(ca, 'gateway-1', randomSerialHex(), { keyType });
    writeFileSync(join(dir, 'client.key'), client.keyPem);
    writeFileSync(join(dir, 'client.crt'), client.certPem);
    openssl(['pkcs12', '-export', '-inkey', 'client.key', '-in', 'client.crt', '-certfile', 'pki/ca.crt', '-name', 'gateway-1', '-passout', 'pass:', '-out', 'theirs.p12']);
    const ours = openPkcs12(buildPkcs12(client.keyPem, client.certPem, ca.certPem, 'gateway-1'));
    const theirs = openPkcs12(readFileSync(join(dir, 'theirs.p12')));
    // The same account line for line, but for the salts' random bytes.
    expect(ours.info).toBe(theirs.info);
    expect(ours.keyPem).toBe(theirs.keyPem);
    expect(ours.certificatePems).toEqual(theirs.certificatePems);
  });
});

describe.each(KEY_TYPES)('certificate requests (%s)', (keyType) => {
  const key = () => createPrivateKey(generateKeys(keyType).keyPem);

  it('the simulator\'s are verified by openssl req and read back with their key', () => {
    const privateKey = key();
    const pem = createCertificateRequest(privateKey, 'gateway-1');
    writeFileSync(join(dir, 'request.csr'), pem);
    expect(openssl(['req', '-in', 'request.csr', '-verify', '-noout', '-subject'])).toBe('subject=CN = gateway-1\n');
    expect(readCertificateRequest(pem)).toEqual({ keyType, spki: createPublicKey(privateKey).export({ type: 'spki', format: 'der' }) });
  });

  it('with a signature of another key are refused', () => {
    const pem = createCertificateRequest(key(), 'gateway-1');
    const other = der.fromPem(createCertificateRequest(key(), 'gateway-1'), 'CERTIFICATE REQUEST')!;
    const [info, algorithm] = der.children(der.read(der.fromPem(pem, 'CERTIFICATE REQUEST')!));
    const signature = der.children(der.read(other))[2]!;
    expect(() => readCertificateRequest(der.pem('CERTIFICATE REQUEST', der.sequence(info!.encoded, algorithm!.encoded, signature.encoded)))).toThrow(
      'its signature does not verify with its public key',
    );
  });

  it('get a certificate of their key that openssl chains to the CA, and a PKCS#12 of the certificates only', async () => {
    const ca = await caOf(dir);
    const privateKey = key();
    const request = readCertificateRequest(createCertificateRequest(privateKey, 'ignored'));
    const { certPem } = await issueClientCertificateForKeyAsync(ca, 'gateway-1', randomSerialHex(), { type: request.keyType, spki: request.spki });
    expect(new X509Certificate(certPem).checkPrivateKey(privateKey)).toBe(true);
    writeFileSync(join(dir, 'gw.crt'), certPem);
    writeFileSync(join(dir, 'ca.crt'), ca.certPem);
    expect(openssl(['verify', '-CAfile', 'ca.crt', 'gw.crt'])).toBe('gw.crt: OK\n');
    writeFileSync(join(dir, 'gw.p12'), buildPkcs12(undefined, certPem, ca.certPem, 'gateway-1'));
    expect(openssl(['pkcs12', '-in', 'gw.p12', '-passin', 'pass:', '-nodes'])).not.toContain('PRIVATE KEY');
    const info = execFileSync('sh', ['-c', 'openssl pkcs12 -in gw.p12 -passin pass: -info -noout 2>&1'], { cwd: dir, encoding: 'utf8' });
    expect(info).toBe('MAC: sha256, Iteration 2048\nMAC length: 32, salt length: 8\nPKCS7 Encrypted data: PBES2, PBKDF2, AES-256-CBC, Iteration 2048, PRF hmacWithSHA256\nCertificate bag\nCertificate bag\n');
  });
});

describe('sealed gateway keys', () => {
  it('open with the token and serial they were sealed with, and with nothing else', () => {
    const { keyPem } = generateKeys('ec-p256');
    const token = 'T'.repeat(43);
    const sealed = sealGatewayKey(keyPem, token, 'ab01');
    expect(sealed.includes(createPrivateKey(keyPem).export({ type: 'pkcs8', format: 'der' }).subarray(-32))).toBe(false);
    expect(openGatewayKey(sealed, token, 'ab01')).toEqual(createPrivateKey(keyPem).export({ type: 'pkcs8', format: 'der' }));
    expect(() => openGatewayKey(sealed, 'U'.repeat(43), 'ab01')).toThrow('the token does not open the sealed key of certificate ab01');
    expect(() => openGatewayKey(sealed, token, 'ab02')).toThrow('the token does not open the sealed key of certificate ab02');
    // Each sealing has its own nonce.
    expect(sealGatewayKey(keyPem, token, 'ab01').equals(sealed)).toBe(false);
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
