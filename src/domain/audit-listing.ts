import { isAuditAction, type AuditAction, type AuditEntry, type AuditKey } from './audit.js';
import { MAX_PAGE_SIZE, isTokenQuery, resolveRange, type Invalid, type TimeRange } from './event-listing.js';
import { decodePageToken, encodePageToken } from './page-token.js';

/**
 * The rules of `GET /{customer_id}/audit-log` (docs/audit.md "Reading it"), those of the event list
 * (domain/event-listing.ts) over `(time, id)`: a half-open range `start_time <= time < end_time`
 * (default: the last day), pages newest first, a token that continues the query.
 */

const TOKEN_KIND = 'audit-log';
const RANGE_NAMES = ['start_time', 'end_time'] as const;

/** The query parameters as the route schema typed them. */
export interface AuditLogParams {
  start_time?: number;
  end_time?: number;
  limit?: number;
  next_token?: string;
  action?: AuditAction;
}

/** What one response reads. */
export interface AuditLogQuery extends TimeRange {
  limit: number;
  before: AuditKey;
  action?: AuditAction;
}

function isAuditKey(value: unknown): value is AuditKey {
  const key = value as AuditKey;
  return typeof value === 'object' && value !== null && Number.isSafeInteger(key.time) && typeof key.id === 'string';
}

/** Resolves the parameters at `now` into what to read, or says what is wrong. */
export function resolveAuditLogQuery(params: AuditLogParams, customer: string, now: number): AuditLogQuery | Invalid {
  if (params.next_token === undefined) {
    const range = resolveRange(params.start_time, params.end_time, now, RANGE_NAMES);
    if ('invalid' in range) return range;
    return { ...range, limit: params.limit ?? MAX_PAGE_SIZE, before: { time: range.end, id: '' }, ...(params.action ? { action: params.action } : {}) };
  }
  const token = decodePageToken(params.next_token, TOKEN_KIND, customer, isAuditKey);
  const query = token?.query;
  if (!token || !isTokenQuery(query) || token.after.time < query.start || token.after.time >= query.end || !(query.action === undefined || (typeof query.action === 'string' && isAuditAction(query.action)))) {
    return { invalid: 'Query parameter "next_token" is not a page token of this customer\'s audit log: use links.next of the previous page as it is.' };
  }
  for (const [name, value, expected] of [
    ['start_time', params.start_time, query.start],
    ['end_time', params.end_time, query.end],
    ['action', params.action, query.action],
  ] as const) {
    if (value !== undefined && value !== expected) {
      return { invalid: `Query parameter "${name}" (${value}) differs from the query of "next_token" (${expected ?? 'none'}): a token continues the query it came from.` };
    }
  }
  const action = query.action as AuditAction | undefined;
  return { start: query.start, end: query.end, limit: params.limit ?? query.limit, before: token.after, ...(action ? { action } : {}) };
}

/** The token of the page after the one that ended at `last`. */
export function nextAuditLogToken(customer: string, query: AuditLogQuery, last: AuditKey): string {
  return encodePageToken({
    kind: TOKEN_KIND,
    customer,
    after: { time: last.time, id: last.id },
    query: { start: query.start, end: query.end, limit: query.limit, ...(query.action ? { action: query.action } : {}) },
  });
}

/** An entry as the API shows it: without its customer (the path names it). */
export function auditLogItem(entry: AuditEntry): Omit<AuditEntry, 'customerId'> {
  const { customerId: _customer, ...item } = entry;
  return item;
}

/** `metadata.filters` of the response: the applied range and action. */
export function auditLogFilters(query: AuditLogQuery): { name: string; value: number | string }[] {
  return [
    { name: 'start_time', value: query.start },
    { name: 'end_time', value: query.end },
    ...(query.action ? [{ name: 'action', value: query.action }] : []),
  ];
}
