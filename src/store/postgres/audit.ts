import type { AuditAction, AuditEntry } from '../../domain/audit.js';
import type { AuditKey, AuditPage, AuditRepository } from '../ports/index.js';
import { AUDIT_COLUMNS, auditPageOf, auditRowValues, type AuditRow } from '../shared/rows.js';
import type { Database, Queryable } from './pool.js';

const INSERT_SQL = `INSERT INTO audit_log (${AUDIT_COLUMNS.join(', ')}) VALUES (${AUDIT_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`;

// `$6::text IS NULL OR action = $6` would hide the action index from a generic plan: two statements.
const PAGE_SQL = `SELECT ${AUDIT_COLUMNS.join(', ')} FROM audit_log
  WHERE customer_id = $1 AND time >= $2 AND (time, id) < ($3, $4)
  ORDER BY time DESC, id DESC LIMIT $5`;

const ACTION_PAGE_SQL = `SELECT ${AUDIT_COLUMNS.join(', ')} FROM audit_log
  WHERE customer_id = $1 AND time >= $2 AND (time, id) < ($3, $4) AND action = $6
  ORDER BY time DESC, id DESC LIMIT $5`;

/** Writes the entry on `client`; the repositories call it inside the transaction of the change the entry records. */
export async function insertAuditEntry(client: Queryable, entry: AuditEntry): Promise<void> {
  await client.query(INSERT_SQL, auditRowValues(entry));
}

/**
 * Runs `change` in one transaction with the audit entries `entriesOf` names for its result (none
 * for a refused change, or when `change` throws), so the entries are written exactly when the change is.
 */
export function audited<T>(
  db: Database,
  change: (client: Queryable) => Promise<T>,
  entriesOf: (result: T) => AuditEntry | readonly AuditEntry[] | undefined,
): Promise<T> {
  return db.transaction(async (client) => {
    const result = await change(client);
    const entries = entriesOf(result);
    for (const entry of entries === undefined ? [] : ([] as AuditEntry[]).concat(entries)) await insertAuditEntry(client, entry);
    return result;
  });
}

/** The audit_log table (migration 0004). */
export class PgAudit implements AuditRepository {
  constructor(private readonly db: Database) {}

  append(entry: AuditEntry): Promise<void> {
    return insertAuditEntry(this.db, entry);
  }

  async newestBefore(customerId: string, start: number, before: AuditKey, limit: number, action?: AuditAction): Promise<AuditPage> {
    const params = [customerId, start, before.time, before.id, limit + 1];
    const { rows } = action === undefined ? await this.db.query<AuditRow>(PAGE_SQL, params) : await this.db.query<AuditRow>(ACTION_PAGE_SQL, [...params, action]);
    return auditPageOf(rows, limit);
  }
}
