import { randomUUID } from 'node:crypto';
import { ApiClient, ApiError } from '../../src/client/api.js';
import type { RunningServer } from '../../src/serve/start.js';
import type { EventRow } from '../../src/store/sqlite/event-rows.js';

/** A test server, or its RunningServer: whose store the seeding helpers write through (either store). */
type HasStore = RunningServer | { server: RunningServer };
const storeOf = (target: HasStore) => ('server' in target ? target.server : target).ctx.store;

/** Stores a gateway of the customer (created at 0, packing, station-1) through the store seam; returns its id. */
export async function insertGateway(target: HasStore, customerId: string, name: string, id: string = randomUUID()): Promise<string> {
  await storeOf(target).gateways.createAll(customerId, [{ id, name, usecase: 'packing', station: 'station-1' }], 0);
  return id;
}

/** Stores another customer (created at 0) with an administrator admin@<id>.example, through the store seam. */
export async function insertCustomer(target: HasStore, id: string): Promise<void> {
  const admin = { id: randomUUID(), customer_id: id, email: `admin@${id}.example`, roles: ['ADMIN_ROLE'], created: 0 };
  const outcome = await storeOf(target).customers.createWithAdmin(id, admin, 0);
  if (outcome !== 'created') throw new Error(`customer ${id}: ${outcome}`);
}

/** Stores events of the customer as they are, through the store seam (an event already stored is skipped); returns how many. */
export function insertEvents(target: HasStore, customerId: string, rows: EventRow[]): Promise<number> {
  return storeOf(target).events.insert(customerId, rows);
}

/** An event id whose order among others is its number: `...-000000000007`. */
export const eventId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** A scan (or, with type, another event) of the gateway as the ingest stores it. */
export function eventRow(id: string, gatewayId: string, created: number, code: string | null, type = 'scan'): EventRow {
  return {
    id,
    class: 'event',
    type,
    created,
    scan_code: code,
    scan_duration: null,
    scan_decode_symbology: null,
    device_id: 'scanner-1',
    device_battery: null,
    device_firmware: null,
    device_temperature: null,
    gateway_id: gatewayId,
    gateway_usecase: 'packing',
    gateway_station: 'station-1',
    metrics_worker_steps: null,
  };
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** A request whose error answers are returned, not thrown: for scenario tables. */
export async function call(client: ApiClient, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer> {
  try {
    const response = await client.request(method, path, { body, headers });
    return { status: response.status, headers: response.headers, body: response.body };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { status: error.status, headers: {}, body: { title: error.title, details: error.details } };
  }
}
