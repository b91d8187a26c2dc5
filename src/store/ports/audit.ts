import type { AuditAction, AuditEntry, AuditKey } from '../../domain/audit.js';

export type { AuditKey };

/** Builds the entry of a change from what the store learned making it (the user of an invitation, the gateway of a token). */
export type AuditOf<T> = (subject: T) => AuditEntry;

/** One page of the audit log and whether more entries follow in its range. */
export interface AuditPage {
  entries: AuditEntry[];
  more: boolean;
}

/** The audit log (docs/audit.md); entries of changes are written by the repositories that make them. */
export interface AuditRepository {
  /** Records an action that changes nothing else (a log-in, a refused log-in). */
  append(entry: AuditEntry): Promise<void>;
  /** Up to `limit` entries of the customer with `start <= time` and `(time, id) < before`, newest first, of one action when given. */
  newestBefore(customerId: string, start: number, before: AuditKey, limit: number, action?: AuditAction): Promise<AuditPage>;
}
