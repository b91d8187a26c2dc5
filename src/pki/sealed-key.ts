import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { fromPem } from './der.js';

/**
 * A gateway's private key at rest (docs/gateways.md "No gateway key at rest"): AES-256-GCM under a
 * key derived (HKDF-SHA256, RFC 5869) from the provisioning token, which the store keeps only as a
 * hash, so only the device's token opens it. The token's 256 random bits need no stretching.
 */

/** The layout's version: the first byte, so another layout can follow. */
const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** The AES key for one certificate's key: the serial in `info` makes each one different. */
function sealingKey(token: string, serial: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(token, 'utf8'), Buffer.alloc(0), `scanhub gateway key ${serial}`, 32));
}

/** The key (PKCS#8 PEM) sealed: version, nonce, tag, ciphertext of its DER; the serial is authenticated with it. */
export function sealGatewayKey(keyPem: string, token: string, serial: string): Buffer {
  const keyDer = fromPem(keyPem, 'PRIVATE KEY');
  if (!keyDer) throw new Error('the gateway key is not a PKCS#8 PEM private key');
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(token, serial), nonce);
  cipher.setAAD(Buffer.from(serial, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(keyDer), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), nonce, cipher.getAuthTag(), ciphertext]);
}

/** The key's PKCS#8 DER from what sealGatewayKey made, with the same token and serial; throws otherwise. */
export function openGatewayKey(sealed: Uint8Array, token: string, serial: string): Buffer {
  const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  if (bytes[0] !== VERSION || bytes.length <= 1 + NONCE_BYTES + TAG_BYTES) throw new Error(`the sealed key of certificate ${serial} is not of version ${VERSION}`);
  const nonce = bytes.subarray(1, 1 + NONCE_BYTES);
  const tag = bytes.subarray(1 + NONCE_BYTES, 1 + NONCE_BYTES + TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', sealingKey(token, serial), nonce);
  decipher.setAAD(Buffer.from(serial, 'utf8'));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(bytes.subarray(1 + NONCE_BYTES + TAG_BYTES)), decipher.final()]);
  } catch (cause) {
    throw new Error(`the token does not open the sealed key of certificate ${serial}`, { cause });
  }
}
