import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretRepository } from '../ports/index.js';

/**
 * AES-256-GCM for what the stores keep encrypted: the deployment's secrets under the master key
 * (PostgreSQL, postgres/secrets.ts) and the webhooks' signing secrets under the deployment's
 * webhook key (both stores). A name or id is authenticated with each value, so a value copied to
 * another row does not open.
 */

/** A sealed value: ciphertext with its nonce and tag. */
export interface SecretRow {
  nonce: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

/** The key as a cipher key; refuses one that is not 32 bytes. */
export function cipherKey(masterKey: Uint8Array): Buffer {
  if (masterKey.byteLength !== 32) throw new Error(`the master key must be 32 bytes, got ${masterKey.byteLength}`);
  return Buffer.from(masterKey);
}

/** Encrypts a value under the key, `name` as additional authenticated data. */
export function sealSecret(key: Buffer, name: string, value: string): SecretRow {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(name));
  const ciphertext = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return { nonce, ciphertext, tag: cipher.getAuthTag() };
}

/** Decrypts a sealed value; throws when the key or the name is not the one it was sealed with. */
export function openSealed(key: Buffer, name: string, row: SecretRow): string {
  const decipher = createDecipheriv('aes-256-gcm', key, row.nonce);
  decipher.setAAD(Buffer.from(name));
  decipher.setAuthTag(row.tag);
  return Buffer.concat([decipher.update(row.ciphertext), decipher.final()]).toString('utf8');
}

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Secrets kept opened (WebhookSecretBox.open): two per webhook for some thousand webhooks. */
const OPENED_KEPT = 4_096;

/**
 * Webhook secrets in one column: nonce, tag, ciphertext, sealed under the key `keys/webhooks.key`
 * (created on first use), the webhook's id authenticated with each. Neither the database alone
 * nor a row moved to another webhook yields a secret.
 */
export class WebhookSecretBox {
  private key: Promise<Buffer> | undefined;
  /**
   * The secrets opened lately, by webhook id and column value: the deliverer reads its webhook at
   * each step, and a decryption there cost as much as the rest of the read. A value sealed again
   * (a rotation) differs in nonce and bytes, so it is opened afresh.
   */
  private readonly opened = new Map<string, { key: Buffer; sealed: Buffer; secret: string }>();

  constructor(private readonly secrets: SecretRepository) {}

  /** Loads the key (once); call before a synchronous transaction that seals or opens. */
  ready(): Promise<Buffer> {
    this.key ??= this.secrets.getOrCreate('keys/webhooks.key', () => randomBytes(32).toString('hex')).then((hex) => cipherKey(Buffer.from(hex.trim(), 'hex')));
    this.key.catch(() => (this.key = undefined));
    return this.key;
  }

  seal(key: Buffer, webhookId: string, secret: string): Buffer {
    const { nonce, ciphertext, tag } = sealSecret(key, webhookId, secret);
    return Buffer.concat([nonce, tag, ciphertext]);
  }

  open(key: Buffer, webhookId: string, sealed: Uint8Array): string {
    const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
    const memo = `${webhookId} ${bytes.subarray(0, NONCE_BYTES).toString('base64')}`;
    const known = this.opened.get(memo);
    if (known && known.key === key && known.sealed.equals(bytes)) return known.secret;
    const secret = this.unseal(key, webhookId, bytes);
    // A handful per webhook (its secret and the previous one): forgotten all at once past the bound.
    if (this.opened.size >= OPENED_KEPT) this.opened.clear();
    this.opened.set(memo, { key, sealed: Buffer.from(bytes), secret });
    return secret;
  }

  private unseal(key: Buffer, webhookId: string, bytes: Buffer): string {
    const row = { nonce: bytes.subarray(0, NONCE_BYTES), tag: bytes.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES), ciphertext: bytes.subarray(NONCE_BYTES + TAG_BYTES) };
    try {
      return openSealed(key, webhookId, row);
    } catch (cause) {
      throw new Error(`the secret of webhook ${webhookId} does not open with the deployment's webhook key (keys/webhooks.key)`, { cause });
    }
  }
}
