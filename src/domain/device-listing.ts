import { DEVICE_STATUSES, type DeviceStatus } from './devices.js';
import { MAX_PAGE_SIZE, type Invalid } from './event-listing.js';
import { decodePageToken, encodePageToken } from './page-token.js';

/**
 * The rules of `GET /{customer_id}/devices` (docs/devices.md): pages in `device_id` order (keyset:
 * the last device id of the page), filters by last gateway, status and battery, and a token that
 * continues the query with the same filters.
 */

const TOKEN_KIND = 'devices';

/** The query parameters as the route schema typed them. */
export interface DeviceListParams {
  gateway_id?: string;
  status?: DeviceStatus;
  battery_below?: number;
  next_token?: string;
  limit?: number;
}

/** The filters a page applies; each one left out matches every device. */
export interface DeviceFilters {
  /** The gateway that relayed the device's newest event. */
  gatewayId?: string;
  status?: DeviceStatus;
  /** Devices whose last reported battery is below this (a device that never reported one is not). */
  batteryBelow?: number;
}

/** What one response reads. */
export interface DeviceListQuery extends DeviceFilters {
  limit: number;
  /** Only devices after this id; null from the first device. */
  after: string | null;
}

/** The filters of the parameters, by parameter name. */
const FILTERS = [
  ['gateway_id', 'gatewayId'],
  ['status', 'status'],
  ['battery_below', 'batteryBelow'],
] as const;

function filtersOf(params: DeviceListParams): DeviceFilters {
  const filters: DeviceFilters = {};
  if (params.gateway_id !== undefined) filters.gatewayId = params.gateway_id;
  if (params.status !== undefined) filters.status = params.status;
  if (params.battery_below !== undefined) filters.batteryBelow = params.battery_below;
  return filters;
}

/** Whether a token's query holds a page size and filters a request could have sent (a token is text a client can forge). */
function isTokenQuery(query: Record<string, unknown> | undefined): query is Record<string, unknown> & { limit: number } & DeviceListParams {
  if (query === undefined) return false;
  const { limit, gateway_id, status, battery_below } = query;
  return (
    Number.isInteger(limit) &&
    (limit as number) >= 1 &&
    (limit as number) <= MAX_PAGE_SIZE &&
    (gateway_id === undefined || typeof gateway_id === 'string') &&
    (status === undefined || DEVICE_STATUSES.includes(status as DeviceStatus)) &&
    (battery_below === undefined || (typeof battery_below === 'number' && battery_below >= 0 && battery_below <= 100))
  );
}

/** Resolves the parameters into what to read, or says what is wrong. */
export function resolveDeviceListQuery(params: DeviceListParams, customer: string): DeviceListQuery | Invalid {
  if (params.next_token === undefined) return { limit: params.limit ?? MAX_PAGE_SIZE, after: null, ...filtersOf(params) };
  const token = decodePageToken(params.next_token, TOKEN_KIND, customer, (after): after is string => typeof after === 'string');
  const query = token?.query;
  if (!token || !isTokenQuery(query)) {
    return { invalid: 'Query parameter "next_token" is not a page token of this customer\'s device list: use links.next of the previous page as it is.' };
  }
  for (const [name] of FILTERS) {
    const value = params[name];
    if (value !== undefined && value !== query[name]) {
      return { invalid: `Query parameter "${name}" (${value}) differs from the query of "next_token" (${query[name] ?? 'none'}): a token continues the query it came from.` };
    }
  }
  return { limit: params.limit ?? query.limit, after: token.after, ...filtersOf(query) };
}

/** The parameters of the query, as the API names them. */
function paramsOf(query: DeviceListQuery): DeviceListParams {
  const params: DeviceListParams = {};
  for (const [name, field] of FILTERS) if (query[field] !== undefined) Object.assign(params, { [name]: query[field] });
  return params;
}

/** The token of the page after the one that ended at device `last`. */
export function nextDeviceToken(customer: string, query: DeviceListQuery, last: string): string {
  return encodePageToken({ kind: TOKEN_KIND, customer, after: last, query: { limit: query.limit, ...paramsOf(query) } });
}

/** `metadata.filters` of the response: the filters applied, as spec 2.3 `{ name, value }`. */
export function deviceListFilters(query: DeviceListQuery): { name: string; value: number | string }[] {
  return Object.entries(paramsOf(query)).map(([name, value]) => ({ name, value: value as number | string }));
}
