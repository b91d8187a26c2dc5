import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SecretRepository } from '../store/ports/index.js';

/** The HMAC key that signs download links (the secret `keys/links.key`, hex), created on first use. */
export async function loadLinkKey(secrets: SecretRepository): Promise<Buffer> {
  const hex = await secrets.getOrCreate('keys/links.key', () => randomBytes(32).toString('hex'));
  return Buffer.from(hex.trim(), 'hex');
}

/** Whether two secrets are equal, in a time that tells nothing about where they differ nor their lengths (both are hashed first). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}
