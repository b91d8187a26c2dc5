import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretName, SecretRepository } from '../ports.js';
import type { Database } from './pool.js';

/** Thrown when the stored secrets were encrypted under another master key. */
export class WrongMasterKey extends Error {
  constructor(name: string, options?: { cause?: unknown }) {
    super(`the master key does not decrypt the secrets stored in this database (secret ${JSON.stringify(name)})`, options);
    this.name = 'WrongMasterKey';
  }
}

interface SecretRow {
  nonce: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

/**
 * The deployment's secrets (CA key and certificate, token-signing key, link key), encrypted with
 * AES-256-GCM under the master key, the name as additional authenticated data. The first process
 * to store a secret wins: every other one reads what it stored.
 */
export class PgSecrets implements SecretRepository {
  private readonly key: Buffer;

  constructor(
    private readonly db: Database,
    masterKey: Uint8Array,
  ) {
    if (masterKey.byteLength !== 32) throw new Error(`the master key must be 32 bytes, got ${masterKey.byteLength}`);
    this.key = Buffer.from(masterKey);
  }

  async get(name: SecretName): Promise<string | undefined> {
    const row = (await this.db.query<SecretRow>('SELECT nonce, ciphertext, tag FROM secrets WHERE name = $1', [name])).rows[0];
    return row && this.decrypt(name, row);
  }

  async getOrCreate(name: SecretName, create: () => string | Promise<string>): Promise<string> {
    const stored = await this.get(name);
    if (stored !== undefined) return stored;
    const { nonce, ciphertext, tag } = this.encrypt(name, await create());
    await this.db.query('INSERT INTO secrets (name, nonce, ciphertext, tag, created) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO NOTHING', [
      name,
      nonce,
      ciphertext,
      tag,
      Date.now(),
    ]);
    // Whoever stored first, this reads the value that is now the deployment's.
    const value = await this.get(name);
    if (value === undefined) throw new Error(`the secret ${JSON.stringify(name)} was stored and is gone`);
    return value;
  }

  private encrypt(name: string, value: string): SecretRow {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(name));
    const ciphertext = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return { nonce, ciphertext, tag: cipher.getAuthTag() };
  }

  private decrypt(name: string, row: SecretRow): string {
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, row.nonce);
      decipher.setAAD(Buffer.from(name));
      decipher.setAuthTag(row.tag);
      return Buffer.concat([decipher.update(row.ciphertext), decipher.final()]).toString('utf8');
    } catch (cause) {
      throw new WrongMasterKey(name, { cause });
    }
  }
}
