import { createHash, randomBytes } from 'node:crypto';

/**
 * API keys for scripts and CI (docs/api-keys.md): `shk_` and 43 base64url characters (32 random
 * bytes). Only the SHA-256 of a key is stored: a key is looked up by its hash.
 */
export const API_KEY_PREFIX = 'shk_';

const API_KEY_SHAPE = /^shk_[A-Za-z0-9_-]{43}$/;

/** A fresh key, shown once to its creator. */
export function newApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** Whether the credential is meant as an API key (it has the prefix), well-formed or not. */
export function looksLikeApiKey(credential: string): boolean {
  return credential.startsWith(API_KEY_PREFIX);
}

/** Whether the key has the shape newApiKey makes. */
export function isWellFormedApiKey(key: string): boolean {
  return API_KEY_SHAPE.test(key);
}

/** What the store keeps of a key: its SHA-256, lower-case hex. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
