import { execFileSync } from 'node:child_process';
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';

/** A PKCS#12 file as `openssl pkcs12` reads it: the private key and the certificates, in file order. */
export interface OpenedPkcs12 {
  key: KeyObject;
  keyPem: string;
  certificates: X509Certificate[];
  certificatePems: string[];
  /** What `openssl pkcs12 -nodes` prints: each bag's attributes and PEM. */
  text: string;
  /** `openssl pkcs12 -info`'s account of the algorithms (MAC, bags). */
  info: string;
}

/**
 * Opens a PKCS#12 with `openssl pkcs12 -passin pass: -nodes` as a device's operator would (no
 * `-legacy`): OpenSSL, not our own code, is the judge of the file.
 */
export function openPkcs12(pkcs12: Buffer): OpenedPkcs12 {
  const run = (extra: string[]) =>
    execFileSync('openssl', ['pkcs12', '-passin', 'pass:', '-nodes', ...extra], { input: pkcs12, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
  const pem = run([]);
  const certificatePems = [...pem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n/g)].map((m) => m[0]);
  const keyPem = /-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----\n/.exec(pem)?.[0];
  if (!keyPem) throw new Error('openssl pkcs12 found no private key');
  // -info writes its account of the file to stderr.
  const info = execFileSync('sh', ['-c', 'openssl pkcs12 -passin pass: -info -noout 2>&1'], { input: pkcs12, encoding: 'utf8' });
  return { key: createPrivateKey(keyPem), keyPem, certificates: certificatePems.map((p) => new X509Certificate(p)), certificatePems, text: pem, info };
}
