import { randomUUID } from 'node:crypto';
import { ApiClient, ApiError } from '../../src/client/api.js';
import type { EventRow } from '../../src/store/sqlite/event-rows.js';
import type { Db } from '../../src/store/sqlite/open.js';

/** Inserts a gateway row of the customer (gateways are another branch's routes) and returns its id. */
export function insertGateway(db: Db, customerId: string, name: string, id: string = randomUUID()): string {
  db.prepare(
    `INSERT INTO gateways (id, customer_id, name, usecase, station, created, last_updated) VALUES (?, ?, ?, 'packing', 'station-1', 0, 0)`,
  ).run(id, customerId, name);
  return id;
}

export function insertCustomer(db: Db, id: string): void {
  db.prepare('INSERT INTO customers (id, created) VALUES (?, 0)').run(id);
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
