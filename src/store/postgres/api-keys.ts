import type { AuditEntry } from '../../domain/audit.js';
import type { ApiKeyRecord, ApiKeyRepository, AuditOf, NewApiKey, UserRecord } from '../ports/index.js';
import { toApiKeyRecord, toUserRecord, type ApiKeyRow, type UserRow } from '../shared/rows.js';
import { audited } from './audit.js';
import type { Database } from './pool.js';

const COLUMNS = 'id, customer_id, name, key_hash, permissions, created, created_by, expires_at, last_used, revoked';
const KEY_COLUMNS = COLUMNS.split(', ').map((column) => `k.${column}`).join(', ');

/** The api_keys table (migration 0005): keys by their hash; a name unique among the keys not revoked. */
export class PgApiKeys implements ApiKeyRepository {
  constructor(private readonly db: Database) {}

  async create(key: NewApiKey, audit?: AuditEntry): Promise<boolean> {
    const result = await audited(this.db, (client) => client.query(
      `INSERT INTO api_keys (id, customer_id, name, key_hash, permissions, created, created_by, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (customer_id, name) WHERE revoked IS NULL DO NOTHING`,
      [key.id, key.customer_id, key.name, key.key_hash, JSON.stringify(key.permissions), key.created, key.created_by, key.expires_at],
    ), (inserted) => (inserted.rowCount === 1 ? audit : undefined));
    return result.rowCount === 1;
  }

  async byHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const row = (await this.db.query<ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE key_hash = $1`, [keyHash])).rows[0];
    return row && toApiKeyRecord(row);
  }

  /** One statement: the creator's row as JSON (its bigints are milliseconds, exact as JSON numbers). */
  async withCreator(keyHash: string): Promise<{ key: ApiKeyRecord; creator: UserRecord | undefined } | undefined> {
    const row = (
      await this.db.query<ApiKeyRow & { creator: UserRow | null }>(
        `SELECT ${KEY_COLUMNS}, to_jsonb(u) AS creator FROM api_keys k LEFT JOIN users u ON u.id = k.created_by WHERE k.key_hash = $1`,
        [keyHash],
      )
    ).rows[0];
    if (!row) return undefined;
    const { creator, ...key } = row;
    return { key: toApiKeyRecord(key), creator: creator ? toUserRecord(creator) : undefined };
  }

  async page(customerId: string, after: { created: number; id: string } | null, limit: number): Promise<ApiKeyRecord[]> {
    const { rows } = await this.db.query<ApiKeyRow>(
      `SELECT ${COLUMNS} FROM api_keys WHERE customer_id = $1 AND revoked IS NULL AND (created, id) > ($2, $3)
       ORDER BY created, id LIMIT $4`,
      [customerId, after?.created ?? -1, after?.id ?? '', limit],
    );
    return rows.map(toApiKeyRecord);
  }

  async revoke(customerId: string, id: string, now: number, audit?: AuditOf<ApiKeyRecord>): Promise<'revoked' | 'missing'> {
    const { rows } = await audited(
      this.db,
      (client) =>
        client.query<ApiKeyRow>(`UPDATE api_keys SET revoked = $1 WHERE customer_id = $2 AND id = $3 AND revoked IS NULL RETURNING ${COLUMNS}`, [now, customerId, id]),
      (revoked) => (revoked.rows[0] && audit ? audit(toApiKeyRecord(revoked.rows[0])) : undefined),
    );
    return rows.length === 1 ? 'revoked' : 'missing';
  }

  async touch(id: string, now: number, staleAt: number): Promise<void> {
    await this.db.query('UPDATE api_keys SET last_used = $1 WHERE id = $2 AND (last_used IS NULL OR last_used <= $3)', [now, id, staleAt]);
  }
}
