import { randomUUID } from 'node:crypto';
import { EVENT_COLUMNS, type EventRow } from '../../src/store/sqlite/event-rows.js';

/** A stored event with the given fields, the rest null; a random id and a scan unless given. */
export function eventRow(fields: Partial<EventRow> & { created: number }): EventRow {
  const row = Object.fromEntries(EVENT_COLUMNS.map((column) => [column, null])) as unknown as EventRow;
  return { ...row, id: randomUUID(), class: 'event', type: 'scan', ...fields };
}

/** Sorts rows the way the list returns them: newest first, then id descending. */
export function newestFirst<T extends { created: number; id: string }>(rows: T[]): T[] {
  return [...rows].sort((a, b) => b.created - a.created || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** Sorts rows the way exports write them: oldest first, then id ascending. */
export function oldestFirst<T extends { created: number; id: string }>(rows: T[]): T[] {
  return newestFirst(rows).reverse();
}
