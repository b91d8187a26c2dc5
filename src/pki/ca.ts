import { mkdirSync } from 'node:fs';
import type { SecretRepository } from '../store/ports.js';
import { join } from 'node:path';
import forge from 'node-forge';
import {
  generateRsaKeyPair,
  generateRsaKeyPairAsync,
  positiveSerial,
  randomSerialHex,
  readIfExists,
  signCertificate,
  writeAtomically,
  type KeyPair,
} from './keys.js';

export { randomSerialHex } from './keys.js';

const { pki } = forge;

/** The deployment CA: signs the MQTT server certificate and every gateway's client certificate. */
export interface CertificateAuthority {
  certPem: string;
  keyPem: string;
}

export interface IssuedCertificate {
  certPem: string;
  keyPem: string;
}

const DAY = 24 * 60 * 60 * 1000;
const CA_LIFETIME_DAYS = 20 * 365;
const SERVER_LIFETIME_DAYS = 825;
const CLIENT_LIFETIME_DAYS = 10 * 365;
/** A stored server certificate with less than this left is reissued at start-up. */
const SERVER_RENEW_BEFORE_DAYS = 30;
/** Certificates start a little in the past so a device with a slightly slow clock accepts them. */
const BACKDATE_MS = 60 * 60 * 1000;

function validity(cert: forge.pki.Certificate, days: number): void {
  const now = Date.now();
  cert.validity.notBefore = new Date(now - BACKDATE_MS);
  cert.validity.notAfter = new Date(now + days * DAY);
}

function createCaCertificate(keys: KeyPair): string {
  const cert = pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = randomSerialHex();
  validity(cert, CA_LIFETIME_DAYS);
  const subject = [
    { name: 'commonName', value: 'scanhub deployment CA' },
    { name: 'organizationName', value: 'scanhub' },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  signCertificate(cert, keys.keyPem);
  return pki.certificateToPem(cert);
}

/** Key pairs for the CA and the server certificate, generated off the event loop while a first start does other work. */
export interface PregeneratedKeys {
  ca?: Promise<KeyPair>;
  server?: Promise<KeyPair>;
}

/**
 * Starts generating the key pairs a first start will need (none on later starts): the CA's when the
 * store has none yet, the MQTT server's when `dataDir` has no `pki/server.key`.
 */
export function pregenerateDeploymentKeys(dataDir: string, caMissing: boolean): PregeneratedKeys {
  return {
    ...(caMissing ? { ca: generateRsaKeyPairAsync() } : {}),
    ...(readIfExists(join(dataDir, 'pki', 'server.key')) === undefined ? { server: generateRsaKeyPairAsync() } : {}),
  };
}

/**
 * The deployment CA from the store's secrets `pki/ca.key` and `pki/ca.crt` (SQLite: those files of
 * the data directory; PostgreSQL: encrypted rows), created on first use, with `pregenerated` as its
 * key when given. Processes starting together agree on one CA: the first key stored wins, and the
 * certificate is made from the key that won.
 */
export async function loadOrCreateCa(secrets: SecretRepository, pregenerated?: KeyPair): Promise<CertificateAuthority> {
  let keyPem = await secrets.get('pki/ca.key');
  if (keyPem === undefined) {
    const keys = pregenerated ?? (await generateRsaKeyPairAsync());
    keyPem = await secrets.getOrCreate('pki/ca.key', () => keys.keyPem);
  }
  const stored = keyPem;
  const certPem = await secrets.getOrCreate('pki/ca.crt', () => {
    const privateKey = pki.privateKeyFromPem(stored) as forge.pki.rsa.PrivateKey;
    return createCaCertificate({ publicKey: pki.setRsaPublicKey(privateKey.n, privateKey.e), keyPem: stored });
  });
  return { certPem, keyPem };
}

function signWithCa(ca: CertificateAuthority, cert: forge.pki.Certificate): void {
  const caCert = pki.certificateFromPem(ca.certPem);
  cert.setIssuer(caCert.subject.attributes);
  signCertificate(cert, ca.keyPem);
}

/** Hosts as subject alternative names: IP SANs (type 7) for addresses, DNS SANs (type 2) for names. */
function altNames(hosts: string[]): { type: number; value?: string; ip?: string }[] {
  const unique = [...new Set([...hosts, 'localhost', '127.0.0.1'].map((h) => h.replace(/^\[|\]$/g, '').toLowerCase()))];
  return unique
    .filter((h) => h !== '' && h !== '0.0.0.0' && h !== '::')
    .map((h) => (isIpAddress(h) ? { type: 7, ip: h } : { type: 2, value: h }));
}

function isIpAddress(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(':');
}

/** Whether a stored server certificate was signed by this CA, covers every host and is not near expiry. */
function serverCertificateFits(ca: CertificateAuthority, certPem: string, hosts: string[]): boolean {
  try {
    const cert = pki.certificateFromPem(certPem);
    const caCert = pki.certificateFromPem(ca.certPem);
    if (!caCert.verify(cert)) return false;
    if (cert.validity.notAfter.getTime() - Date.now() < SERVER_RENEW_BEFORE_DAYS * DAY) return false;
    const san = cert.getExtension('subjectAltName') as { altNames?: { type: number; value?: string; ip?: string }[] } | null;
    const covered = new Set((san?.altNames ?? []).map((n) => (n.type === 7 ? n.ip : n.value)?.toLowerCase()));
    return altNames(hosts).every((n) => covered.has(n.type === 7 ? n.ip : n.value));
  } catch {
    return false;
  }
}

/**
 * A server certificate from `pki/<name>.{crt,key}` (the MQTT listener's is `server`, HTTPS's with
 * `serve --https` is `https`), reissued when it does not cover `hosts` (plus localhost and
 * 127.0.0.1), was signed by another CA, or expires within 30 days.
 */
export function issueServerCertificate(
  ca: CertificateAuthority,
  dataDir: string,
  hosts: string[],
  pregenerated?: KeyPair,
  name: 'server' | 'https' = 'server',
): IssuedCertificate {
  const dir = join(dataDir, 'pki');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  const storedCert = readIfExists(certFile);
  const storedKey = readIfExists(keyFile);
  if (storedCert !== undefined && storedKey !== undefined && serverCertificateFits(ca, storedCert, hosts)) {
    return { certPem: storedCert, keyPem: storedKey };
  }
  const keys = pregenerated ?? generateRsaKeyPair();
  const cert = pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = randomSerialHex();
  validity(cert, SERVER_LIFETIME_DAYS);
  const names = altNames(hosts);
  const first = names.find((n) => n.type === 2)?.value ?? names[0]!.ip!;
  cert.setSubject([{ name: 'commonName', value: first }]);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: names },
  ]);
  signWithCa(ca, cert);
  const certPem = pki.certificateToPem(cert);
  // Key first: a reader holding the new certificate then always finds its key.
  writeAtomically(keyFile, keys.keyPem);
  writeAtomically(certFile, certPem);
  return { certPem, keyPem: keys.keyPem };
}

/** Validity of a certificate other than the default (tests of expiry). */
export interface Validity {
  notBefore: Date;
  notAfter: Date;
}

/** A gateway's client certificate: fresh RSA 2048 key, CN = `commonName`, clientAuth only; valid 10 years unless `validity` says otherwise. */
export function issueClientCertificate(ca: CertificateAuthority, commonName: string, serialHex: string, validity?: Validity): IssuedCertificate {
  return certifyClientKey(ca, generateRsaKeyPair(), commonName, serialHex, validity);
}

/** As `issueClientCertificate`, generating the key off the event loop. */
export async function issueClientCertificateAsync(ca: CertificateAuthority, commonName: string, serialHex: string): Promise<IssuedCertificate> {
  return certifyClientKey(ca, await generateRsaKeyPairAsync(), commonName, serialHex);
}

function certifyClientKey(ca: CertificateAuthority, keys: KeyPair, commonName: string, serialHex: string, given?: Validity): IssuedCertificate {
  const cert = pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = positiveSerial(serialHex);
  validity(cert, CLIENT_LIFETIME_DAYS);
  if (given) Object.assign(cert.validity, given);
  cert.setSubject([{ name: 'commonName', value: commonName }]);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', clientAuth: true },
  ]);
  signWithCa(ca, cert);
  return { certPem: pki.certificateToPem(cert), keyPem: keys.keyPem };
}
