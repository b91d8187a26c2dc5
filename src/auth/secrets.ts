import { randomBytes } from 'node:crypto';
import type { SecretRepository } from '../store/ports.js';

/** The HMAC key that signs download links (the secret `keys/links.key`, hex), created on first use. */
export async function loadLinkKey(secrets: SecretRepository): Promise<Buffer> {
  const hex = await secrets.getOrCreate('keys/links.key', () => randomBytes(32).toString('hex'));
  return Buffer.from(hex.trim(), 'hex');
}
