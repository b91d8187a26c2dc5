import type { AuditEntry } from '../domain/audit.js';
import type { CustomerApi, List } from './api.js';

/** An entry as `GET /{customer_id}/audit-log` returns it: the entry without its customer. */
export type AuditItem = Omit<AuditEntry, 'customerId'>;

/** The query of the audit log: a range of times in milliseconds, an action, a page size. */
export interface AuditQuery {
  start_time: number;
  end_time?: number;
  action?: string;
  limit?: number;
}

/** The first page of the audit log in the range, newest first. */
export function listAuditLog(api: CustomerApi, query: AuditQuery): Promise<List<AuditItem>> {
  return api.client.get<List<AuditItem>>(`${api.base}/audit-log`, { ...query });
}
