import { randomUUID } from 'node:crypto';
import { EVENT_COLUMNS, type EventRow } from '../../src/store/sqlite/event-rows.js';

/** A stored event with the given fields, the rest null; a random id and a scan unless given. */
export function eventRow(fields: Partial<EventRow> & { created: number }): EventRow {
  const row = Object.fromEntries(EVENT_COLUMNS.map((column) => [column, null])) as unknown as EventRow;
  return { ...row, id: randomUUID(), class: 'event', type: 'scan', ...fields };
}

/** A scan (or, with type, another event) of the gateway as the ingest stores it: device scanner-1, packing, station-1. */
export function scanRow(id: string, gatewayId: string, created: number, code: string | null, type = 'scan'): EventRow {
  return eventRow({ id, type, created, scan_code: code, device_id: 'scanner-1', gateway_id: gatewayId, gateway_usecase: 'packing', gateway_station: 'station-1' });
}

/** An event id whose order among others is its number: `...-000000000007`. */
export const eventId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** Sorts rows the way the list returns them: newest first, then id descending. */
export function newestFirst<T extends { created: number; id: string }>(rows: T[]): T[] {
  return [...rows].sort((a, b) => b.created - a.created || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** Sorts rows the way exports write them: oldest first, then id ascending. */
export function oldestFirst<T extends { created: number; id: string }>(rows: T[]): T[] {
  return newestFirst(rows).reverse();
}
