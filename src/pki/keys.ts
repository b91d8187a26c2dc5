import { generateKeyPair, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';

/** The key types the service makes (`serve --gateway-key-type` chooses the gateways'; the CA's is RSA). */
export const KEY_TYPES = ['ec-p256', 'rsa-2048'] as const;
export type KeyType = (typeof KEY_TYPES)[number];
/** EC P-256: keys far cheaper to make than RSA 2048, and faster handshakes (bench/README.md "provisioning"). */
export const DEFAULT_GATEWAY_KEY_TYPE: KeyType = 'ec-p256';

export interface KeyPair {
  type: KeyType;
  /** The public key as a SubjectPublicKeyInfo, DER. */
  spki: Buffer;
  /** PKCS#8, PEM. */
  keyPem: string;
}

const PUBLIC = { type: 'spki', format: 'der' } as const;
const PRIVATE = { type: 'pkcs8', format: 'pem' } as const;

/** A key pair from node:crypto (OpenSSL); forge's pure-JS RSA keygen took seconds. */
export function generateKeys(type: KeyType): KeyPair {
  const { publicKey, privateKey } =
    type === 'rsa-2048'
      ? generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: PUBLIC, privateKeyEncoding: PRIVATE })
      : generateKeyPairSync('ec', { namedCurve: 'prime256v1', publicKeyEncoding: PUBLIC, privateKeyEncoding: PRIVATE });
  return { type, spki: publicKey, keyPem: privateKey };
}

const generateKeyPairAsync = promisify(generateKeyPair);

/** The same, on libuv's thread pool (encodings included), so many keys can be made in parallel without blocking. */
export async function generateKeysAsync(type: KeyType): Promise<KeyPair> {
  const { publicKey, privateKey } =
    type === 'rsa-2048'
      ? await generateKeyPairAsync('rsa', { modulusLength: 2048, publicKeyEncoding: PUBLIC, privateKeyEncoding: PRIVATE })
      : await generateKeyPairAsync('ec', { namedCurve: 'prime256v1', publicKeyEncoding: PUBLIC, privateKeyEncoding: PRIVATE });
  return { type, spki: publicKey, keyPem: privateKey };
}

/** Which of KEY_TYPES a key is (for what operators read); undefined for another kind. */
export function keyTypeOf(key: KeyObject): KeyType | undefined {
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ec-p256';
  if (key.asymmetricKeyType === 'rsa' && key.asymmetricKeyDetails?.modulusLength === 2048) return 'rsa-2048';
  return undefined;
}

/** A random positive serial number (DER INTEGER content must not have its top bit set). */
export function randomSerialHex(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
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
