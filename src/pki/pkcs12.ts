import forge from 'node-forge';

const { pki } = forge;

/**
 * A PKCS#12 bundle of the key, its certificate and the CA certificate, with an empty password.
 * The key is encrypted with PBES2/AES-256 (not forge's legacy RC2/3DES choices) so OpenSSL 3
 * reads it without `-legacy`, and so does Node's `tls` (`pfx`, `passphrase: ''`).
 */
export function buildPkcs12(keyPem: string, certPem: string, caCertPem: string): Buffer {
  const key = pki.privateKeyFromPem(keyPem);
  const certs = [pki.certificateFromPem(certPem), pki.certificateFromPem(caCertPem)];
  const commonName = certs[0]!.subject.getField('CN')?.value as string | undefined;
  const options: Record<string, unknown> = { algorithm: 'aes256', prfAlgorithm: 'sha256', count: 2048 };
  if (commonName) options.friendlyName = commonName;
  const asn1 = forge.pkcs12.toPkcs12Asn1(key, certs, '', options as Parameters<typeof forge.pkcs12.toPkcs12Asn1>[3]);
  return Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary');
}
