import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** A server certificate (PEM, chain allowed) and its private key (PEM), as HTTPS serves them. */
export interface TlsPair {
  certPem: string;
  keyPem: string;
}

/** A TLS file that cannot be served: which of the two (`cert` or `key`) and why, quoting the file. */
export class TlsPairError extends Error {
  constructor(
    readonly file: 'cert' | 'key',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'TlsPairError';
  }
}

function readText(which: 'cert' | 'key', path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new TlsPairError(which, `"${path}" does not exist`, { cause: error });
    throw new TlsPairError(which, `cannot read "${path}": ${code ?? (error as Error).message}`, { cause: error });
  }
}

/**
 * Reads and checks a certificate file and its key file: both PEM, and the key the certificate's.
 * Throws TlsPairError naming the file at fault.
 */
export function readTlsPair(certFile: string, keyFile: string): TlsPair {
  const certPem = readText('cert', certFile);
  const keyPem = readText('key', keyFile);
  let certificate: X509Certificate;
  try {
    // X509Certificate also takes DER: a PEM file must say so.
    if (!certPem.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no BEGIN CERTIFICATE line');
    certificate = new X509Certificate(certPem);
  } catch (error) {
    throw new TlsPairError('cert', `"${certFile}" is not a PEM certificate`, { cause: error });
  }
  let key: KeyObject;
  try {
    if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(keyPem)) throw new Error('no BEGIN PRIVATE KEY line');
    key = createPrivateKey(keyPem);
  } catch (error) {
    throw new TlsPairError('key', `"${keyFile}" is not a PEM private key (unencrypted)`, { cause: error });
  }
  if (!certificate.checkPrivateKey(key)) throw new TlsPairError('key', `"${keyFile}" does not match the certificate in "${certFile}"`);
  return { certPem, keyPem };
}

/** The SHA-256 fingerprint of a PEM certificate, as openssl prints it (AB:CD:...). */
export function sha256Fingerprint(certPem: string): string {
  return new X509Certificate(certPem).fingerprint256;
}

/** A CA certificate file a client trusts (`--ca-cert`): PEM, returned as read. Throws TlsPairError. */
export function readCaCertificate(file: string): string {
  const pem = readText('cert', file);
  try {
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no BEGIN CERTIFICATE line');
    new X509Certificate(pem);
  } catch (error) {
    throw new TlsPairError('cert', `"${file}" is not a PEM certificate`, { cause: error });
  }
  return pem;
}
