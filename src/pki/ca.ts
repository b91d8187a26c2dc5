import { X509Certificate, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { SecretRepository } from '../store/ports/index.js';
import { DEFAULT_GATEWAY_KEY_TYPE, generateKeys, generateKeysAsync, randomSerialHex, readIfExists, writeAtomically, type KeyPair, type KeyType } from './keys.js';
import { distinguishedName, extensions, ipAddressBytes, issueCertificate, issueCertificateAsync, subjectName, type CertificateFields } from './x509.js';

export { randomSerialHex } from './keys.js';

/** The deployment CA (RSA 2048): signs the MQTT server certificate and every gateway's client certificate. */
export interface CertificateAuthority {
  certPem: string;
  keyPem: string;
}

export interface IssuedCertificate {
  certPem: string;
  keyPem: string;
}

/** A gateway's certificate as issued, with its expiry (ms, to the second as the certificate holds it). */
export interface IssuedClientCertificate extends IssuedCertificate {
  notAfter: number;
}

const DAY = 24 * 60 * 60 * 1000;
const CA_LIFETIME_DAYS = 20 * 365;
const SERVER_LIFETIME_DAYS = 825;
const CLIENT_LIFETIME_DAYS = 10 * 365;
/** A stored server certificate with less than this left is reissued at start-up. */
const SERVER_RENEW_BEFORE_DAYS = 30;
/** Certificates start a little in the past so a device with a slightly slow clock accepts them. */
const BACKDATE_MS = 60 * 60 * 1000;

function validity(days: number): Validity {
  const now = Date.now();
  return { notBefore: new Date(now - BACKDATE_MS), notAfter: new Date(now + days * DAY) };
}

function createCaCertificate(keys: KeyPair): string {
  const name = distinguishedName('scanhub deployment CA', 'scanhub');
  const fields: CertificateFields = {
    serialHex: randomSerialHex(),
    issuer: name,
    subject: name,
    ...validity(CA_LIFETIME_DAYS),
    spki: keys.spki,
    extensions: [extensions.basicConstraints(true), extensions.keyUsage('keyCertSign', 'cRLSign'), extensions.subjectKeyIdentifier(keys.spki)],
  };
  return issueCertificate(fields, createPrivateKey(keys.keyPem));
}

/** Key pairs for the CA and the server certificate, generated off the event loop while a first start does other work. */
export interface PregeneratedKeys {
  ca?: Promise<KeyPair>;
  server?: Promise<KeyPair>;
}

/**
 * Starts generating the key pairs a first start will need (none on later starts): the CA's when the
 * store has none yet, the MQTT server's when `dataDir` has no `pki/server.key`. Both RSA 2048.
 */
export function pregenerateDeploymentKeys(dataDir: string, caMissing: boolean): PregeneratedKeys {
  return {
    ...(caMissing ? { ca: generateKeysAsync('rsa-2048') } : {}),
    ...(readIfExists(join(dataDir, 'pki', 'server.key')) === undefined ? { server: generateKeysAsync('rsa-2048') } : {}),
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
    const keys = pregenerated ?? (await generateKeysAsync('rsa-2048'));
    keyPem = await secrets.getOrCreate('pki/ca.key', () => keys.keyPem);
  }
  const stored = keyPem;
  const certPem = await secrets.getOrCreate('pki/ca.crt', () => createCaCertificate({ type: 'rsa-2048', spki: createPublicKey(stored).export({ type: 'spki', format: 'der' }), keyPem: stored }));
  return { certPem, keyPem };
}

/** What signing with a CA needs, parsed once per CA object: its key and its subject (the issuer of what it signs). */
interface Signer {
  key: KeyObject;
  issuer: Buffer;
}

const signers = new WeakMap<CertificateAuthority, Signer>();

function signerOf(ca: CertificateAuthority): Signer {
  let signer = signers.get(ca);
  if (!signer) {
    signer = { key: createPrivateKey(ca.keyPem), issuer: subjectName(ca.certPem) };
    signers.set(ca, signer);
  }
  return signer;
}

/** Hosts as subject alternative names: IP addresses as IP names, anything else as DNS names. */
function altNames(hosts: string[]): { dns?: string; ip?: string }[] {
  const unique = [...new Set([...hosts, 'localhost', '127.0.0.1'].map((h) => h.replace(/^\[|\]$/g, '').toLowerCase()))];
  return unique.filter((h) => h !== '' && h !== '0.0.0.0' && h !== '::').map((h) => (isIpAddress(h) ? { ip: h } : { dns: h }));
}

function isIpAddress(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(':');
}

/** How X509Certificate.subjectAltName spells a name (IPv6 as eight groups without zero compression). */
function spelled(name: { dns?: string; ip?: string }): string {
  if (name.dns !== undefined) return `DNS:${name.dns}`;
  if (!name.ip!.includes(':')) return `IP Address:${name.ip}`;
  const bytes = ipAddressBytes(name.ip!);
  return `IP Address:${Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16).toUpperCase()).join(':')}`;
}

/** Whether a stored server certificate was signed by this CA, covers every host and is not near expiry. */
function serverCertificateFits(ca: CertificateAuthority, certPem: string, hosts: string[]): boolean {
  try {
    const cert = new X509Certificate(certPem);
    if (!cert.verify(new X509Certificate(ca.certPem).publicKey)) return false;
    if (Date.parse(cert.validTo) - Date.now() < SERVER_RENEW_BEFORE_DAYS * DAY) return false;
    const covered = new Set((cert.subjectAltName ?? '').split(', ').map((name) => name.toUpperCase()));
    return altNames(hosts).every((name) => covered.has(spelled(name).toUpperCase()));
  } catch {
    return false;
  }
}

/**
 * A server certificate from `pki/<name>.{crt,key}` (the MQTT listener's is `server`, HTTPS's with
 * `serve --https` is `https`), reissued when it does not cover `hosts` (plus localhost and
 * 127.0.0.1), was signed by another CA, or expires within 30 days. Its key is RSA 2048.
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
  const keys = pregenerated ?? generateKeys('rsa-2048');
  const names = altNames(hosts);
  const signer = signerOf(ca);
  const certPem = issueCertificate(
    {
      serialHex: randomSerialHex(),
      issuer: signer.issuer,
      subject: distinguishedName(names.find((n) => n.dns !== undefined)?.dns ?? names[0]!.ip!),
      ...validity(SERVER_LIFETIME_DAYS),
      spki: keys.spki,
      extensions: [
        extensions.basicConstraints(false),
        extensions.keyUsage('digitalSignature', 'keyEncipherment'),
        extensions.extendedKeyUsage('serverAuth'),
        extensions.subjectAltName(names),
      ],
    },
    signer.key,
  );
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

/** What a client certificate may differ in: its key type (EC P-256 by default) and validity (10 years). */
export interface ClientCertificateOptions {
  keyType?: KeyType;
  validity?: Validity;
}

/** A gateway's public key: of a pair the service made, or of a device's certificate request. */
export type GatewayPublicKey = Pick<KeyPair, 'type' | 'spki'>;

/** The fields of a gateway's client certificate: CN = `commonName`, clientAuth only. */
function clientFields(ca: CertificateAuthority, keys: GatewayPublicKey, commonName: string, serialHex: string, given?: Validity): CertificateFields {
  return {
    serialHex,
    issuer: signerOf(ca).issuer,
    subject: distinguishedName(commonName),
    ...(given ?? validity(CLIENT_LIFETIME_DAYS)),
    spki: keys.spki,
    extensions: [
      extensions.basicConstraints(false),
      // An EC key signs (ECDSA); an RSA key also decrypts in RSA key exchange (TLS 1.2).
      keys.type === 'rsa-2048' ? extensions.keyUsage('digitalSignature', 'keyEncipherment') : extensions.keyUsage('digitalSignature'),
      extensions.extendedKeyUsage('clientAuth'),
    ],
  };
}

/** A gateway's client certificate with a fresh key, signed by the CA. */
export function issueClientCertificate(ca: CertificateAuthority, commonName: string, serialHex: string, options: ClientCertificateOptions = {}): IssuedClientCertificate {
  const keys = generateKeys(options.keyType ?? DEFAULT_GATEWAY_KEY_TYPE);
  const fields = clientFields(ca, keys, commonName, serialHex, options.validity);
  return { certPem: issueCertificate(fields, signerOf(ca).key), keyPem: keys.keyPem, notAfter: toTheSecond(fields.notAfter) };
}

/** As `issueClientCertificate`, the key made and the certificate signed on libuv's thread pool. */
export async function issueClientCertificateAsync(
  ca: CertificateAuthority,
  commonName: string,
  serialHex: string,
  keyType: KeyType = DEFAULT_GATEWAY_KEY_TYPE,
): Promise<IssuedClientCertificate> {
  const keys = await generateKeysAsync(keyType);
  const fields = clientFields(ca, keys, commonName, serialHex);
  return { certPem: await issueCertificateAsync(fields, signerOf(ca).key), keyPem: keys.keyPem, notAfter: toTheSecond(fields.notAfter) };
}

/**
 * A gateway's client certificate for a key the device keeps (its certificate request): the same
 * name and extensions as one with a key of ours, signed on libuv's thread pool.
 */
export async function issueClientCertificateForKeyAsync(
  ca: CertificateAuthority,
  commonName: string,
  serialHex: string,
  publicKey: GatewayPublicKey,
): Promise<Omit<IssuedClientCertificate, 'keyPem'>> {
  const fields = clientFields(ca, publicKey, commonName, serialHex);
  return { certPem: await issueCertificateAsync(fields, signerOf(ca).key), notAfter: toTheSecond(fields.notAfter) };
}

/** A certificate's times are whole seconds. */
const toTheSecond = (date: Date) => Math.floor(date.getTime() / 1000) * 1000;
