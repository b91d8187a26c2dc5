import { decodePageToken, encodePageToken, isCreatedIdKey, type CreatedIdKey } from './page-token.js';

/**
 * The rules of the event list (docs/events.md "GET /{customer_id}/events"): time range defaults,
 * half-open ranges, page sizes and the keyset token. Newest first means the list walks `(created,
 * id)` downwards, so a page is "the events of the range before a key".
 */

/** Default length of the range: one day. */
export const DEFAULT_RANGE_MS = 24 * 3600 * 1000;
export const MAX_PAGE_SIZE = 500;
/** The last millisecond JavaScript's Date can show (and so the last a range may name): 8.64e15. */
export const MAX_TIME_MILLIS = 8_640_000_000_000_000;
const TOKEN_KIND = 'events';

/** The query parameters of the list and the export, as the route schema typed them. */
export interface EventRangeParams {
  start_time_millis?: number;
  end_time_millis?: number;
}

export interface EventListParams extends EventRangeParams {
  limit?: number;
  next_token?: string;
  next_key?: string;
  gateway_id?: string;
}

/** A half-open time range `start <= created < end`, in milliseconds since the epoch. */
export interface TimeRange {
  start: number;
  end: number;
}

/** What one response reads. */
export interface EventListQuery extends TimeRange {
  limit: number;
  /** Only events before this key in `(created, id)` order: the end of the range, or the last key of the previous page. */
  before: CreatedIdKey;
  gatewayId?: string;
}

/** A rule was broken; `details` says which parameter and why, for a 400. */
export interface Invalid {
  invalid: string;
}

/**
 * The range of a list or export: `end` defaults to now, `start` to one day before `end` (which
 * is one day before now when `end` is not given: docs/events.md says why not always before now).
 */
export function resolveTimeRange(params: EventRangeParams, now: number): TimeRange | Invalid {
  return resolveRange(params.start_time_millis, params.end_time_millis, now, ['start_time_millis', 'end_time_millis']);
}

/** As resolveTimeRange, for a list whose range parameters have other names (the audit log's start_time, end_time). */
export function resolveRange(start: number | undefined, end: number | undefined, now: number, names: readonly [string, string]): TimeRange | Invalid {
  const until = end ?? now;
  const from = start ?? Math.max(0, until - DEFAULT_RANGE_MS);
  if (from > until) {
    return { invalid: `Query parameter "${names[0]}" (${from}) is after "${names[1]}" (${until}): the range must not end before it starts.` };
  }
  return { start: from, end: until };
}

/** The first key past the end of a range: `(created, id) < (end, '')` is `created < end`. */
export function endKey(end: number): CreatedIdKey {
  return { created: end, id: '' };
}

/** The range and page size a page token repeats. */
export interface TokenQuery {
  start: number;
  end: number;
  limit: number;
}

/** Whether a page token's query holds a valid range and page size (a token is text a client can forge). */
export function isTokenQuery(value: Record<string, unknown> | undefined): value is Record<string, unknown> & TokenQuery {
  const { start, end, limit } = (value ?? {}) as Partial<TokenQuery>;
  // The bounds of the query parameters: a token is text a client can forge, and a range outside
  // Date's made the page's description throw (a 500).
  const isTime = (time: number | undefined) => Number.isSafeInteger(time) && time! >= 0 && time! <= MAX_TIME_MILLIS;
  return (
    isTime(start) &&
    isTime(end) &&
    Number.isInteger(limit) &&
    start! <= end! &&
    limit! >= 1 &&
    limit! <= MAX_PAGE_SIZE
  );
}

/** Resolves the parameters of `GET /{customer}/events` at `now` into what to read, or says what is wrong. */
export function resolveEventListQuery(params: EventListParams, customer: string, now: number): EventListQuery | Invalid {
  if (params.next_token !== undefined && params.next_key !== undefined && params.next_token !== params.next_key) {
    return { invalid: 'Query parameters "next_token" and "next_key" differ: send only "next_token" ("next_key" is its deprecated name).' };
  }
  const tokenText = params.next_token ?? params.next_key;
  const tokenName = params.next_token !== undefined ? 'next_token' : 'next_key';
  if (tokenText === undefined) {
    const range = resolveTimeRange(params, now);
    if ('invalid' in range) return range;
    const query: EventListQuery = { ...range, limit: params.limit ?? MAX_PAGE_SIZE, before: endKey(range.end) };
    if (params.gateway_id !== undefined) query.gatewayId = params.gateway_id;
    return query;
  }

  if (params.gateway_id !== undefined) {
    return { invalid: `Query parameter "gateway_id" cannot be combined with "${tokenName}": the gateway filter returns the whole range in one response.` };
  }
  const token = decodePageToken(tokenText, TOKEN_KIND, customer, isCreatedIdKey);
  if (!token || !isTokenQuery(token.query) || token.after.created < token.query.start || token.after.created >= token.query.end) {
    return { invalid: `Query parameter "${tokenName}" is not a page token of this customer's event list: use links.next of the previous page as it is.` };
  }
  const { start, end, limit } = token.query;
  for (const [name, value, expected] of [
    ['start_time_millis', params.start_time_millis, start],
    ['end_time_millis', params.end_time_millis, end],
  ] as const) {
    if (value !== undefined && value !== expected) {
      return { invalid: `Query parameter "${name}" (${value}) differs from the range of "${tokenName}" (${expected}): a token continues the query it came from.` };
    }
  }
  return { start, end, limit: params.limit ?? limit, before: token.after };
}

/** The token of the page after the one that ended at `last`. */
export function nextPageToken(customer: string, query: EventListQuery, last: CreatedIdKey): string {
  return encodePageToken({
    kind: TOKEN_KIND,
    customer,
    after: { created: last.created, id: last.id },
    query: { start: query.start, end: query.end, limit: query.limit },
  });
}

/** `metadata.filters` of the response: the applied range (and gateway), as `{ name, value }` (docs/http.md "Lists"). */
export function appliedFilters(query: EventListQuery): { name: string; value: number | string }[] {
  const filters: { name: string; value: number | string }[] = [
    { name: 'start_time_millis', value: query.start },
    { name: 'end_time_millis', value: query.end },
  ];
  if (query.gatewayId !== undefined) filters.push({ name: 'gateway_id', value: query.gatewayId });
  return filters;
}
