import type { AuditEntry } from '../../domain/audit.js';
import type { ApiKeyRecord, ApiKeyRepository, AuditOf, NewApiKey, UserRecord } from '../ports/index.js';
import { toApiKeyRecord, toUserRecord, type ApiKeyRow, type UserRow } from '../shared/rows.js';
import { audited } from './audit.js';
import type { Db } from './open.js';
import { LIMIT } from './statements.js';

/** The api_keys table (migration 0010): keys by their hash; a name unique among the keys not revoked. */
export class SqliteApiKeys implements ApiKeyRepository {
  private readonly insert;
  private readonly selectByHash;
  private readonly selectCreator;
  private readonly selectPage;
  private readonly markRevoked;
  private readonly markUsed;

  constructor(private readonly db: Db) {
    this.insert = db.prepare(
      `INSERT INTO api_keys (id, customer_id, name, key_hash, permissions, created, created_by, expires_at)
       VALUES (@id, @customer_id, @name, @key_hash, @permissions, @created, @created_by, @expires_at)
       ON CONFLICT (customer_id, name) WHERE revoked IS NULL DO NOTHING`,
    );
    this.selectByHash = db.prepare<[string], ApiKeyRow>('SELECT * FROM api_keys WHERE key_hash = ?');
    this.selectCreator = db.prepare<[string], UserRow>('SELECT * FROM users WHERE id = ?');
    this.selectPage = db.prepare<{ customerId: string; created: number; id: string; limit: number }, ApiKeyRow>(
      `SELECT * FROM api_keys WHERE customer_id = @customerId AND revoked IS NULL AND (created, id) > (@created, @id)
       ORDER BY created, id ${LIMIT}`,
    );
    this.markRevoked = db.prepare<[number, string, string], ApiKeyRow>(
      'UPDATE api_keys SET revoked = ? WHERE customer_id = ? AND id = ? AND revoked IS NULL RETURNING *',
    );
    this.markUsed = db.prepare('UPDATE api_keys SET last_used = ? WHERE id = ? AND (last_used IS NULL OR last_used <= ?)');
  }

  async create(key: NewApiKey, audit?: AuditEntry): Promise<boolean> {
    const inserted = () => this.insert.run({ ...key, permissions: JSON.stringify(key.permissions) }).changes === 1;
    return audited(this.db, inserted, (created) => (created ? audit : undefined));
  }

  async byHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const row = this.selectByHash.get(keyHash);
    return row && toApiKeyRecord(row);
  }

  async withCreator(keyHash: string): Promise<{ key: ApiKeyRecord; creator: UserRecord | undefined } | undefined> {
    const row = this.selectByHash.get(keyHash);
    if (!row) return undefined;
    const creator = this.selectCreator.get(row.created_by);
    return { key: toApiKeyRecord(row), creator: creator && toUserRecord(creator) };
  }

  async page(customerId: string, after: { created: number; id: string } | null, limit: number): Promise<ApiKeyRecord[]> {
    return this.selectPage.all({ customerId, created: after?.created ?? -1, id: after?.id ?? '', limit }).map(toApiKeyRecord);
  }

  /** 'missing' when there was no key of the customer to revoke. */
  async revoke(customerId: string, id: string, now: number, audit?: AuditOf<ApiKeyRecord>): Promise<'revoked' | 'missing'> {
    const revoked = audited(
      this.db,
      () => {
        const row = this.markRevoked.get(now, customerId, id);
        return row && toApiKeyRecord(row);
      },
      (key) => (key && audit ? audit(key) : undefined),
    );
    return revoked ? 'revoked' : 'missing';
  }

  async touch(id: string, now: number, staleAt: number): Promise<void> {
    this.markUsed.run(now, id, staleAt);
  }
}
