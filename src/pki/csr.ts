import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import * as der from './der.js';
import { keyTypeOf, type KeyType } from './keys.js';
import { distinguishedName } from './x509.js';

/**
 * PKCS#10 certificate requests (RFC 2986), as `openssl req -new` writes them (docs/gateways.md
 * "Provisioning with the device's own key"). Only the public key is taken: the certificate's name
 * and extensions are the service's to choose, so the subject and attributes are ignored.
 */

/** The most characters a request may have in the API: an RSA 2048 request is about 1 KB of PEM. */
export const CSR_MAX_LENGTH = 16_384;

/** What a request gives the certificate: its public key, checked. */
export interface CertificateRequest {
  keyType: KeyType;
  /** The public key as a SubjectPublicKeyInfo, DER (as node:crypto exports it). */
  spki: Buffer;
}

/** A request the service does not sign; the message says why in words a device's maker can act on. */
export class CsrRefused extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CsrRefused';
  }
}

/** Signature algorithms (RFC 5758 3.2, RFC 4055 5): the hash, and which kind of key signs with it. */
const SIGNATURE_ALGORITHMS: Record<string, { hash: string; key: 'ec' | 'rsa' }> = {
  '1.2.840.10045.4.3.2': { hash: 'sha256', key: 'ec' },
  '1.2.840.10045.4.3.3': { hash: 'sha384', key: 'ec' },
  '1.2.840.10045.4.3.4': { hash: 'sha512', key: 'ec' },
  '1.2.840.113549.1.1.11': { hash: 'sha256', key: 'rsa' },
  '1.2.840.113549.1.1.12': { hash: 'sha384', key: 'rsa' },
  '1.2.840.113549.1.1.13': { hash: 'sha512', key: 'rsa' },
};

const LABELS = ['CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST'];

/** The DER inside the PEM block; only one block, and nothing else but white space. */
function requestDer(pem: string): Buffer {
  const blocks = pem.match(/-----BEGIN [A-Z0-9 ]+-----/g) ?? [];
  const label = LABELS.find((l) => blocks[0] === `-----BEGIN ${l}-----`);
  if (!label) throw new CsrRefused('it is not a PEM certificate request: it must begin with "-----BEGIN CERTIFICATE REQUEST-----", as `openssl req -new` writes it');
  if (blocks.length > 1) throw new CsrRefused('it holds more than one PEM block: send the certificate request alone');
  const encoded = der.fromPem(pem, label);
  if (!encoded || encoded.length === 0) throw new CsrRefused(`its "${label}" block is not base64 between BEGIN and END lines`);
  return encoded;
}

/** The three parts of a CertificationRequest, read strictly (DER, nothing after it). */
function parts(encoded: Buffer): { info: der.Element; algorithm: string; signature: Buffer; spki: Buffer } {
  try {
    const request = der.read(encoded);
    if (request.tag !== 0x30 || request.encoded.length !== encoded.length) throw new Error('not one SEQUENCE');
    const [info, algorithm, signature, ...rest] = der.children(request);
    if (!info || info.tag !== 0x30 || !algorithm || algorithm.tag !== 0x30 || !signature || signature.tag !== 0x03 || rest.length) throw new Error('not info, algorithm, signature');
    const [version, subject, spki, attributes] = der.children(info);
    if (!version || version.tag !== 0x02 || !version.contents.equals(Buffer.from([0]))) throw new Error('not version 1 (0)');
    if (!subject || subject.tag !== 0x30 || !spki || spki.tag !== 0x30 || !attributes || attributes.tag !== 0xa0) throw new Error('not subject, key, attributes');
    // A BIT STRING of whole bytes: the first content byte counts the unused bits.
    if (signature.contents[0] !== 0) throw new Error('signature not whole bytes');
    const algorithmId = der.children(algorithm)[0];
    if (!algorithmId) throw new Error('no signature algorithm');
    return { info, algorithm: der.readOid(algorithmId), signature: signature.contents.subarray(1), spki: spki.encoded };
  } catch (error) {
    throw new CsrRefused(`it is not a PKCS#10 certificate request (RFC 2986): its DER cannot be read (${(error as Error).message})`, { cause: error });
  }
}

/** Words for a key the service does not sign, e.g. `EC secp384r1`, `RSA 1024`. */
function describeKey(key: KeyObject): string {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'ec') return `EC ${details.namedCurve ?? 'of an unknown curve'}`;
  if (key.asymmetricKeyType === 'rsa') return `RSA ${details.modulusLength ?? '?'}`;
  return (key.asymmetricKeyType ?? 'unknown').toUpperCase();
}

/**
 * Reads a PEM certificate request and checks it: well-formed, an EC P-256 or RSA 2048 key, and
 * signed by that key (the proof that the sender holds it). Throws CsrRefused saying what is wrong.
 */
export function readCertificateRequest(pem: string): CertificateRequest {
  const { info, algorithm, signature, spki } = parts(requestDer(pem));
  let key: KeyObject;
  try {
    key = createPublicKey({ key: spki, format: 'der', type: 'spki' });
  } catch (error) {
    throw new CsrRefused('its public key cannot be read', { cause: error });
  }
  const keyType = keyTypeOf(key);
  if (!keyType) throw new CsrRefused(`its key is ${describeKey(key)}: scanhub signs EC P-256 (prime256v1) and RSA 2048 keys only`);
  const signing = SIGNATURE_ALGORITHMS[algorithm];
  if (!signing) throw new CsrRefused(`its signature algorithm ${algorithm} is not supported: sign with SHA-256 (ECDSA, or RSA PKCS#1 v1.5), as openssl req does by default`);
  if (signing.key !== key.asymmetricKeyType) throw new CsrRefused(`its signature algorithm ${algorithm} is not one of its ${describeKey(key)} key`);
  let valid: boolean;
  try {
    valid = verify(signing.hash, info.encoded, key, signature);
  } catch {
    valid = false;
  }
  if (!valid) throw new CsrRefused('its signature does not verify with its public key: make the request again with the key the device keeps (openssl req -new -key ...)');
  return { keyType, spki: key.export({ type: 'spki', format: 'der' }) };
}

/**
 * A certificate request (PEM) for the key, as `openssl req -new -key KEY -subj /CN=<commonName>`
 * makes one: no attributes, signed with SHA-256 (ECDSA, or RSA PKCS#1 v1.5).
 */
export function createCertificateRequest(privateKey: KeyObject, commonName: string): string {
  const algorithm = privateKey.asymmetricKeyType === 'ec' ? '1.2.840.10045.4.3.2' : '1.2.840.113549.1.1.11';
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  const info = der.sequence(der.integer(0), distinguishedName(commonName), spki, der.context(0));
  // ECDSA's AlgorithmIdentifier has no parameters; RSA's has NULL (RFC 5758 3.2, RFC 4055 5).
  const signatureAlgorithm = der.sequence(der.oid(algorithm), ...(privateKey.asymmetricKeyType === 'ec' ? [] : [der.nullValue()]));
  return der.pem('CERTIFICATE REQUEST', der.sequence(info, signatureAlgorithm, der.bitString(sign('sha256', info, privateKey))));
}
