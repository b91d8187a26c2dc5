import { createCipheriv, createHash, createHmac, createPrivateKey, pbkdf2Sync, randomBytes } from 'node:crypto';
import * as der from './der.js';

/**
 * PKCS#12 (RFC 7292) as OpenSSL 3's `openssl pkcs12 -export` writes it, so that OpenSSL 3 reads it
 * without `-legacy` and Node's `tls` too: PBES2 (PBKDF2-HMAC-SHA256, 2048 iterations, AES-256-CBC)
 * bags and an HMAC-SHA256 MAC. The password is empty, so the derived keys protect nothing (the token
 * and HTTPS do): derived once per process (per-process salts), they spare each redemption the
 * PKCS#12 KDF's hashes in JavaScript (bench/README.md "provisioning"). IVs stay per file.
 */

const OID = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  pkcs8ShroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  certBag: '1.2.840.113549.1.12.10.1.3',
  x509Certificate: '1.2.840.113549.1.9.22.1',
  friendlyName: '1.2.840.113549.1.9.20',
  localKeyId: '1.2.840.113549.1.9.21',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
  hmacWithSha256: '1.2.840.113549.2.9',
  aes256Cbc: '2.16.840.1.101.3.4.1.42',
  sha256: '2.16.840.1.101.3.4.2.1',
} as const;

/** OpenSSL 3's PKCS12_DEFAULT_ITER, for both the encryption and the MAC. */
export const PKCS12_ITERATIONS = 2048;
const SALT_BYTES = 8;

interface DerivedKeys {
  encryptionSalt: Buffer;
  encryptionKey: Buffer;
  macSalt: Buffer;
  macKey: Buffer;
}

let derived: DerivedKeys | undefined;

/** This process's keys for the empty password, derived on first use. */
function derivedKeys(): DerivedKeys {
  if (!derived) {
    const encryptionSalt = randomBytes(SALT_BYTES);
    const macSalt = randomBytes(SALT_BYTES);
    derived = {
      encryptionSalt,
      // PBES2 takes the password as bytes: none.
      encryptionKey: pbkdf2Sync(Buffer.alloc(0), encryptionSalt, PKCS12_ITERATIONS, 32, 'sha256'),
      macSalt,
      macKey: pkcs12Kdf(macSalt, PKCS12_ITERATIONS),
    };
  }
  return derived;
}

/**
 * RFC 7292 B.2 with SHA-256 for the MAC key (ID 3) of the empty password, which PKCS#12 encodes
 * as a BMPString with its terminating zero (two zero bytes), as `openssl pkcs12 -passout pass:`
 * does. 32 bytes are one hash long, so one round of B.2 step 6 suffices.
 */
export function pkcs12Kdf(salt: Buffer, iterations: number): Buffer {
  const v = 64; // SHA-256 block size
  const fill = (bytes: Buffer) => Buffer.alloc(v * Math.ceil(bytes.length / v), bytes);
  const password = Buffer.alloc(2);
  let a = Buffer.concat([Buffer.alloc(v, 3), fill(salt), fill(password)]);
  for (let i = 0; i < iterations; i++) a = createHash('sha256').update(a).digest();
  return a;
}

function pbes2(salt: Buffer, iv: Buffer): Buffer {
  const prf = der.sequence(der.oid(OID.hmacWithSha256), der.nullValue());
  const kdf = der.sequence(der.oid(OID.pbkdf2), der.sequence(der.octetString(salt), der.integer(PKCS12_ITERATIONS), prf));
  return der.sequence(der.oid(OID.pbes2), der.sequence(kdf, der.sequence(der.oid(OID.aes256Cbc), der.octetString(iv))));
}

/** The plaintext encrypted with the process's PBES2 key: its AlgorithmIdentifier and ciphertext. */
function encrypt(plaintext: Buffer): { algorithm: Buffer; ciphertext: Buffer } {
  const { encryptionSalt, encryptionKey } = derivedKeys();
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-cbc', encryptionKey, iv);
  return { algorithm: pbes2(encryptionSalt, iv), ciphertext: Buffer.concat([cipher.update(plaintext), cipher.final()]) };
}

/** The DER of a PEM certificate; parsing it costs more than the rest of the file. */
function certificateDer(certPem: string): Buffer {
  const encoded = der.fromPem(certPem, 'CERTIFICATE');
  if (!encoded) throw new Error('not a PEM certificate');
  return encoded;
}

const attribute = (type: string, value: Buffer) => der.sequence(der.oid(type), der.set(value));
const safeBag = (type: string, value: Buffer, attributes: Buffer[]) =>
  der.sequence(der.oid(type), der.context(0, value), ...(attributes.length ? [der.set(...attributes)] : []));
const certBag = (certificate: Buffer, attributes: Buffer[]) =>
  safeBag(OID.certBag, der.sequence(der.oid(OID.x509Certificate), der.context(0, der.octetString(certificate))), attributes);

/**
 * A PKCS#12 bundle of the key (PKCS#8: PEM, or DER), its certificate and the CA certificate, with
 * an empty password; `friendlyName` (the gateway's CN) labels the key and its certificate. Without
 * a key (the device made its own: a certificate request), the certificates only, the gateway's
 * still labelled, so that `openssl pkcs12 -clcerts` and `-cacerts` tell the two apart.
 */
export function buildPkcs12(key: string | Buffer | undefined, certPem: string, caCertPem: string, friendlyName?: string): Buffer {
  const certificate = certificateDer(certPem);
  const attributes = [
    attribute(OID.localKeyId, der.octetString(createHash('sha1').update(certificate).digest())),
    ...(friendlyName === undefined ? [] : [attribute(OID.friendlyName, der.bmpString(friendlyName))]),
  ];
  const certificates = encrypt(der.sequence(certBag(certificate, attributes), certBag(certificateDer(caCertPem), [])));
  const safes = [
    der.sequence(
      der.oid(OID.encryptedData),
      der.context(0, der.sequence(der.integer(0), der.sequence(der.oid(OID.data), certificates.algorithm, der.tlv(0x80, certificates.ciphertext)))),
    ),
  ];
  if (key !== undefined) {
    const sealed = encrypt(keyDer(key));
    const keyBag = safeBag(OID.pkcs8ShroudedKeyBag, der.sequence(sealed.algorithm, der.octetString(sealed.ciphertext)), attributes);
    safes.push(der.sequence(der.oid(OID.data), der.context(0, der.octetString(der.sequence(keyBag)))));
  }
  const authenticatedSafe = der.sequence(...safes);
  const { macSalt, macKey } = derivedKeys();
  const mac = createHmac('sha256', macKey).update(authenticatedSafe).digest();
  return der.sequence(
    der.integer(3),
    der.sequence(der.oid(OID.data), der.context(0, der.octetString(authenticatedSafe))),
    der.sequence(der.sequence(der.sequence(der.oid(OID.sha256), der.nullValue()), der.octetString(mac)), der.octetString(macSalt), der.integer(PKCS12_ITERATIONS)),
  );
}

/** A private key as PKCS#8 DER: given so, or from its PEM (PKCS#8 as is; another PEM through node:crypto). */
function keyDer(key: string | Buffer): Buffer {
  if (Buffer.isBuffer(key)) return key;
  return der.fromPem(key, 'PRIVATE KEY') ?? createPrivateKey(key).export({ type: 'pkcs8', format: 'der' });
}
