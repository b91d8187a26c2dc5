import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { JWK } from 'jose';
import type { AuditEntry } from '../domain/audit.js';
import type { SecretRepository } from '../store/ports/index.js';

/**
 * The deployment's IdToken signing keys (docs/users.md "Signing keys"): a JWK Set (RFC 7517, 5) of
 * private ES256 keys, oldest first, each with our member `created`; the newest signs, every one
 * verifies. A deployment from before rotation holds a single JWK: read as a set of that one key.
 */
export const SIGNING_KEY_SECRET = 'keys/idtoken.jwk';
export const SIGNING_ALG = 'ES256';

/** One key of the set: a private JWK with `kid` and `alg`, and when it was made (0: before rotation existed). */
export interface SigningKey {
  jwk: JWK & { kid: string };
  created: number;
}

/** A new P-256 key pair with a random kid. */
export function newSigningKey(now: number): SigningKey {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { jwk: { ...(privateKey.export({ format: 'jwk' }) as JWK), kid: randomUUID(), alg: SIGNING_ALG }, created: now };
}

/** The keys of the secret's text, oldest first; throws when it holds none. */
export function parseSigningKeys(text: string): SigningKey[] {
  type StoredKey = JWK & { created?: number };
  const stored = JSON.parse(text) as StoredKey & { keys?: StoredKey[] };
  const jwks: StoredKey[] = stored.keys ?? [stored];
  const keys = jwks.map(({ created, ...jwk }) => {
    if (typeof jwk.kid !== 'string' || typeof jwk.d !== 'string') throw new Error(`${SIGNING_KEY_SECRET} holds a key without "kid" or private part`);
    return { jwk: { ...jwk, kid: jwk.kid }, created: typeof created === 'number' ? created : 0 };
  });
  if (keys.length === 0) throw new Error(`${SIGNING_KEY_SECRET} holds no key`);
  return keys;
}

/** The secret's text for the keys (oldest first). */
export function serialiseSigningKeys(keys: readonly SigningKey[]): string {
  return `${JSON.stringify({ keys: keys.map((key) => ({ ...key.jwk, created: key.created })) })}\n`;
}

/** The public half of a key, as the JWKS publishes it. */
export function publicJwkOf(key: SigningKey): JWK {
  const { d: _private, ...publicJwk } = key.jwk;
  return { ...publicJwk, use: 'sig' };
}

/** What a rotation did. */
export interface Rotation {
  keys: SigningKey[];
  added: SigningKey;
  /** The kids of keys dropped because every token they signed has expired. */
  dropped: string[];
}

/**
 * The set after a rotation at `now`: a new key that signs from now on, and every older key kept
 * while a token it signed may still be valid: until `keepMs` after its successor was made (the
 * token lifetime plus the time running instances take to notice the successor).
 */
export function rotateSigningKeys(keys: readonly SigningKey[], now: number, keepMs: number): Rotation {
  const added = newSigningKey(now);
  const kept: SigningKey[] = [];
  const dropped: string[] = [];
  keys.forEach((key, i) => {
    const successor = keys[i + 1];
    if (successor && successor.created + keepMs <= now) dropped.push(key.jwk.kid);
    else kept.push(key);
  });
  return { keys: [...kept, added], added, dropped };
}

/**
 * Rotates the stored set at `now` (`scanhub operator rotate-signing-key`) in one replacement of
 * the secret, with the audit entries `audit` makes of the rotation for the deployment's customers.
 */
export async function rotateStoredSigningKeys(
  secrets: SecretRepository,
  now: number,
  keepMs: number,
  audit?: (rotation: Rotation, customerIds: string[]) => AuditEntry[],
): Promise<Rotation> {
  let rotation: Rotation | undefined;
  await secrets.replace(
    SIGNING_KEY_SECRET,
    (current) => {
      rotation = rotateSigningKeys(current === undefined ? [] : parseSigningKeys(current), now, keepMs);
      return serialiseSigningKeys(rotation.keys);
    },
    audit && ((customerIds) => audit(rotation!, customerIds)),
  );
  return rotation!;
}
