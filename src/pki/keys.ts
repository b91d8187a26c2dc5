import { generateKeyPair, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import forge from 'node-forge';

const { pki } = forge;

export interface KeyPair {
  publicKey: forge.pki.PublicKey;
  keyPem: string;
}

/** An RSA 2048 key pair from node:crypto: forge's pure-JS keygen takes seconds. */
export function generateRsaKeyPair(): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { publicKey: pki.publicKeyFromPem(publicKey), keyPem: privateKey };
}

const generateKeyPairAsync = promisify(generateKeyPair);

/** The same, on libuv's thread pool, so many keys can be made in parallel without blocking. */
export async function generateRsaKeyPairAsync(): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { publicKey: pki.publicKeyFromPem(publicKey), keyPem: privateKey };
}

/**
 * Signs with SHA-256/RSA exactly as forge's `cert.sign` would, but with node:crypto, which is
 * many times faster than forge's pure-JS RSA (this matters for bulk provisioning).
 */
export function signCertificate(cert: forge.pki.Certificate, signerKeyPem: string): void {
  const internal = cert as forge.pki.Certificate & { tbsCertificate: forge.asn1.Asn1; md: forge.md.MessageDigest };
  // getTBSCertificate is public in forge but missing from its type definitions.
  const { getTBSCertificate } = pki as unknown as { getTBSCertificate(c: forge.pki.Certificate): forge.asn1.Asn1 };
  internal.md = forge.md.sha256.create();
  internal.signatureOid = internal.siginfo.algorithmOid = pki.oids.sha256WithRSAEncryption!;
  internal.tbsCertificate = getTBSCertificate(cert);
  const tbs = Buffer.from(forge.asn1.toDer(internal.tbsCertificate).getBytes(), 'binary');
  internal.signature = sign('sha256', tbs, signerKeyPem).toString('binary');
}

/** A random positive serial number (DER INTEGER content must not have its top bit set). */
export function randomSerialHex(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}

/** Forge writes the hex as the raw INTEGER content: keep it positive and of even length. */
export function positiveSerial(serialHex: string): string {
  if (!/^[0-9a-fA-F]+$/.test(serialHex)) throw new Error(`certificate serial ${JSON.stringify(serialHex)} is not hex`);
  let hex = serialHex.length % 2 === 1 ? `0${serialHex}` : serialHex;
  if (parseInt(hex.slice(0, 2), 16) >= 0x80) hex = `00${hex}`;
  return hex.toLowerCase();
}

/** A file's text, or undefined when it does not exist. */
export function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read ${file}`, { cause: error });
  }
}

/** Replaces `file` by rename so a reader never sees it half-written. */
export function writeAtomically(file: string, content: string): void {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temp, content, { mode: 0o600, flag: 'wx' });
  renameSync(temp, file);
}
