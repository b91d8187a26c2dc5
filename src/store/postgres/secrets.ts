import type { AuditEntry } from '../../domain/audit.js';
import type { SecretName, SecretRepository } from '../ports/index.js';
import { insertAuditEntry } from './audit.js';
import { ADVISORY_LOCKS } from './locks.js';
import type { Database } from './pool.js';
import { cipherKey, openSealed, sealSecret, type SecretRow } from '../shared/sealing.js';

/** Thrown when the stored secrets were encrypted under another master key. */
export class WrongMasterKey extends Error {
  constructor(name: string, options?: { cause?: unknown }) {
    super(`the master key does not decrypt the secrets stored in this database (secret ${JSON.stringify(name)})`, options);
    this.name = 'WrongMasterKey';
  }
}

export { cipherKey, sealSecret, type SecretRow } from '../shared/sealing.js';

/** Decrypts a stored secret; WrongMasterKey when the key (or the name) is not the one it was sealed with. */
export function openSecret(key: Buffer, name: string, row: SecretRow): string {
  try {
    return openSealed(key, name, row);
  } catch (cause) {
    throw new WrongMasterKey(name, { cause });
  }
}

/** Stores a secret inside the caller's transaction (the first value stored under a name wins). */
export const INSERT_SECRET_SQL = 'INSERT INTO secrets (name, nonce, ciphertext, tag, created) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO NOTHING';

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
    this.key = cipherKey(masterKey);
  }

  async get(name: SecretName): Promise<string | undefined> {
    const row = (await this.db.query<SecretRow>('SELECT nonce, ciphertext, tag FROM secrets WHERE name = $1', [name])).rows[0];
    return row && openSecret(this.key, name, row);
  }

  async getOrCreate(name: SecretName, create: () => string | Promise<string>): Promise<string> {
    const stored = await this.get(name);
    if (stored !== undefined) return stored;
    const { nonce, ciphertext, tag } = sealSecret(this.key, name, await create());
    await this.db.query(INSERT_SECRET_SQL, [name, nonce, ciphertext, tag, Date.now()]);
    // Whoever stored first, this reads the value that is now the deployment's.
    const value = await this.get(name);
    if (value === undefined) throw new Error(`the secret ${JSON.stringify(name)} was stored and is gone`);
    return value;
  }

  /** Under a transaction-level advisory lock per name: replacements of one secret happen one at a time. */
  replace(name: SecretName, change: (current: string | undefined) => string, audit?: (customerIds: string[]) => AuditEntry[]): Promise<string> {
    return this.db.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [ADVISORY_LOCKS.secrets, name]);
      const row = (await client.query<SecretRow>('SELECT nonce, ciphertext, tag FROM secrets WHERE name = $1', [name])).rows[0];
      const value = change(row && openSecret(this.key, name, row));
      const { nonce, ciphertext, tag } = sealSecret(this.key, name, value);
      await client.query(
        `INSERT INTO secrets (name, nonce, ciphertext, tag, created) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (name) DO UPDATE SET nonce = excluded.nonce, ciphertext = excluded.ciphertext, tag = excluded.tag`,
        [name, nonce, ciphertext, tag, Date.now()],
      );
      const customerIds = (await client.query<{ id: string }>('SELECT id FROM customers ORDER BY id')).rows.map((r) => r.id);
      for (const entry of audit?.(customerIds) ?? []) await insertAuditEntry(client, entry);
      return value;
    });
  }
}
