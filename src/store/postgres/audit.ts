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

/** Entries per INSERT: 500 rows of 11 values stay well within PostgreSQL's 65,535 parameters. */
const ENTRIES_PER_INSERT = 500;

/** Writes the entries in as few statements as it can (a bulk call's thousand entries in two, not a thousand round trips). */
export async function insertAuditEntries(client: Queryable, entries: readonly AuditEntry[]): Promise<void> {
  for (let i = 0; i < entries.length; i += ENTRIES_PER_INSERT) {
    const chunk = entries.slice(i, i + ENTRIES_PER_INSERT);
    const width = AUDIT_COLUMNS.length;
    const rows = chunk.map((_, r) => `(${AUDIT_COLUMNS.map((__, c) => `$${r * width + c + 1}`).join(', ')})`);
    await client.query(`INSERT INTO audit_log (${AUDIT_COLUMNS.join(', ')}) VALUES ${rows.join(', ')}`, chunk.flatMap(auditRowValues));
  }
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
    await insertAuditEntries(client, entries === undefined ? [] : ([] as AuditEntry[]).concat(entries));
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
