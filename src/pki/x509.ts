import { X509Certificate, createHash, sign, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import * as der from './der.js';

/**
 * X.509 v3 certificates (RFC 5280) written with src/pki/der.ts and signed by node:crypto: the CA's,
 * the servers' and the gateways'. The issuer is always an RSA key (the deployment CA, or the CA
 * itself when it signs its own certificate); the subject's key may be RSA or EC.
 */

const OID = {
  commonName: '2.5.4.3',
  organizationName: '2.5.4.10',
  sha256WithRsaEncryption: '1.2.840.113549.1.1.11',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  extendedKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

const SIGNATURE_ALGORITHM = der.sequence(der.oid(OID.sha256WithRsaEncryption), der.nullValue());

/** A Name of one CN (and an O when given), each in its own RDN, as UTF8String. */
export function distinguishedName(commonName: string, organizationName?: string): Buffer {
  const rdn = (type: string, value: string) => der.set(der.sequence(der.oid(type), der.utf8String(value)));
  return der.sequence(rdn(OID.commonName, commonName), ...(organizationName === undefined ? [] : [rdn(OID.organizationName, organizationName)]));
}

/** The subject Name of a PEM certificate, byte for byte, to be the issuer of what it signs. */
export function subjectName(certPem: string): Buffer {
  const certificate = der.read(new X509Certificate(certPem).raw);
  const fields = der.children(der.children(certificate)[0]!);
  // tbsCertificate: [0] version, serialNumber, signature, issuer, validity, subject, ...
  const first = fields[0]!.tag === 0xa0 ? 1 : 0;
  return fields[first + 4]!.encoded;
}

type KeyUsage = 'digitalSignature' | 'keyEncipherment' | 'keyCertSign' | 'cRLSign';
const KEY_USAGE_BITS: Record<KeyUsage, number> = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 };

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return der.sequence(der.oid(id), ...(critical ? [der.boolean(true)] : []), der.octetString(value));
}

/** Extensions (RFC 5280 4.2.1), each ready for `CertificateFields.extensions`. */
export const extensions = {
  basicConstraints: (ca: boolean) => extension(OID.basicConstraints, true, der.sequence(...(ca ? [der.boolean(true)] : []))),
  /** A named bit list: DER drops the trailing zero bits and says how many of the last byte are unused. */
  keyUsage(...usages: KeyUsage[]): Buffer {
    const bits = usages.map((usage) => KEY_USAGE_BITS[usage]);
    const last = Math.max(...bits);
    const bytes = Buffer.alloc((last >> 3) + 1);
    for (const bit of bits) bytes[bit >> 3]! |= 0x80 >> (bit & 7);
    return extension(OID.keyUsage, true, der.tlv(0x03, Buffer.from([7 - (last & 7)]), bytes));
  },
  extendedKeyUsage: (...purposes: ('serverAuth' | 'clientAuth')[]) =>
    extension(OID.extendedKeyUsage, false, der.sequence(...purposes.map((purpose) => der.oid(OID[purpose])))),
  /** dNSName ([2] IA5String) and iPAddress ([7], 4 or 16 bytes) names. */
  subjectAltName: (names: { dns?: string; ip?: string }[]) =>
    extension(OID.subjectAltName, false, der.sequence(...names.map((name) => (name.ip !== undefined ? der.tlv(0x87, ipAddressBytes(name.ip)) : der.tlv(0x82, Buffer.from(name.dns!, 'ascii')))))),
  /** RFC 5280 4.2.1.2 method (1): SHA-1 of the subjectPublicKey bits. */
  subjectKeyIdentifier(spki: Buffer): Buffer {
    const [, bits] = der.children(der.read(spki));
    return extension(OID.subjectKeyIdentifier, false, der.octetString(createHash('sha1').update(bits!.contents.subarray(1)).digest()));
  },
};

/** An IPv4 or IPv6 address as its 4 or 16 bytes. */
export function ipAddressBytes(address: string): Buffer {
  if (!address.includes(':')) return Buffer.from(address.split('.').map(Number));
  // An IPv4 tail (::ffff:1.2.3.4) becomes two groups, then "::" is widened to the missing zeros.
  const text = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a, b, c, d) => `${((+a << 8) | +b).toString(16)}:${((+c << 8) | +d).toString(16)}`);
  const [head, tail] = text.split('::') as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const all = tail === undefined ? groups(head) : [...groups(head), ...Array<string>(8 - groups(head).length - groups(tail).length).fill('0'), ...groups(tail)];
  const bytes = Buffer.alloc(16);
  all.forEach((group, i) => bytes.writeUInt16BE(parseInt(group, 16), i * 2));
  return bytes;
}

/** What goes into a certificate besides the fixed parts (v3, SHA-256 with RSA). */
export interface CertificateFields {
  /** Hex digits of a positive serial number. */
  serialHex: string;
  issuer: Buffer;
  subject: Buffer;
  notBefore: Date;
  notAfter: Date;
  /** The subject's public key, a SubjectPublicKeyInfo (DER). */
  spki: Buffer;
  extensions: Buffer[];
}

/** The hex as the bytes of a positive INTEGER. */
function serialBytes(serialHex: string): Buffer {
  if (!/^[0-9a-fA-F]+$/.test(serialHex)) throw new Error(`certificate serial ${JSON.stringify(serialHex)} is not hex`);
  return Buffer.from(serialHex.length % 2 ? `0${serialHex}` : serialHex, 'hex');
}

function toBeSigned(fields: CertificateFields): Buffer {
  return der.sequence(
    der.context(0, der.integer(2)), // v3
    der.integer(serialBytes(fields.serialHex)),
    SIGNATURE_ALGORITHM,
    fields.issuer,
    der.sequence(der.time(fields.notBefore), der.time(fields.notAfter)),
    fields.subject,
    fields.spki,
    der.context(3, der.sequence(...fields.extensions)),
  );
}

function assemble(tbs: Buffer, signature: Buffer): string {
  return der.pem('CERTIFICATE', der.sequence(tbs, SIGNATURE_ALGORITHM, der.bitString(signature)));
}

function rsaSigner(issuerKey: KeyObject): KeyObject {
  if (issuerKey.asymmetricKeyType !== 'rsa') throw new Error(`the CA key is ${issuerKey.asymmetricKeyType}: certificates are signed with RSA only`);
  return issuerKey;
}

/** The certificate (PEM) with `fields`, signed by the issuer's RSA key (SHA-256). */
export function issueCertificate(fields: CertificateFields, issuerKey: KeyObject): string {
  const tbs = toBeSigned(fields);
  return assemble(tbs, sign('sha256', tbs, rsaSigner(issuerKey)));
}

const signAsync = promisify(sign);

/** As `issueCertificate`, the signature made on libuv's thread pool. */
export async function issueCertificateAsync(fields: CertificateFields, issuerKey: KeyObject): Promise<string> {
  const tbs = toBeSigned(fields);
  return assemble(tbs, await signAsync('sha256', tbs, rsaSigner(issuerKey)));
}
