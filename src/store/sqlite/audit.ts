import type { AuditAction, AuditEntry } from '../../domain/audit.js';
import type { AuditKey, AuditPage, AuditRepository } from '../ports/index.js';
import { AUDIT_COLUMNS, auditPageOf, auditRowValues, type AuditRow } from '../shared/rows.js';
import type { Db } from './open.js';
import { LIMIT, prepared } from './statements.js';

const INSERT_SQL = `INSERT INTO audit_log (${AUDIT_COLUMNS.join(', ')}) VALUES (${AUDIT_COLUMNS.map(() => '?').join(', ')})`;

const PAGE_SQL = `SELECT ${AUDIT_COLUMNS.join(', ')} FROM audit_log
  WHERE customer_id = @customerId AND time >= @start AND (time, id) < (@time, @id)
  ORDER BY time DESC, id DESC ${LIMIT}`;

const ACTION_PAGE_SQL = `SELECT ${AUDIT_COLUMNS.join(', ')} FROM audit_log
  WHERE customer_id = @customerId AND action = @action AND time >= @start AND (time, id) < (@time, @id)
  ORDER BY time DESC, id DESC ${LIMIT}`;

/**
 * Writes the entry on `db`; the repositories call it inside the transaction of the change the
 * entry records. One prepared statement per connection.
 */
export function insertAuditEntry(db: Db, entry: AuditEntry): void {
  prepared(db, INSERT_SQL).run(auditRowValues(entry));
}

/**
 * Runs `change` in one transaction with the audit entries `entriesOf` names for its result (none
 * for a refused change), so the entries are written exactly when the change is.
 */
export function audited<T>(db: Db, change: () => T, entriesOf: (result: T) => AuditEntry | readonly AuditEntry[] | undefined): T {
  return db
    .transaction(() => {
      const result = change();
      const entries = entriesOf(result);
      for (const entry of entries === undefined ? [] : ([] as AuditEntry[]).concat(entries)) insertAuditEntry(db, entry);
      return result;
    })
    .immediate();
}

/** The audit_log table (migration 0009). */
export class SqliteAudit implements AuditRepository {
  private readonly page;
  private readonly actionPage;

  constructor(private readonly db: Db) {
    this.page = db.prepare<[Record<string, unknown>], AuditRow>(PAGE_SQL);
    this.actionPage = db.prepare<[Record<string, unknown>], AuditRow>(ACTION_PAGE_SQL);
  }

  async append(entry: AuditEntry): Promise<void> {
    insertAuditEntry(this.db, entry);
  }

  async newestBefore(customerId: string, start: number, before: AuditKey, limit: number, action?: AuditAction): Promise<AuditPage> {
    const params = { customerId, start, time: before.time, id: before.id, limit: limit + 1 };
    const rows = action === undefined ? this.page.all(params) : this.actionPage.all({ ...params, action });
    return auditPageOf(rows, limit);
  }
}
