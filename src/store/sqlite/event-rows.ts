import { EVENT_COLUMNS, type EventRow } from '../../domain/events.js';
import type { Db } from './open.js';

export { EVENT_COLUMNS, toApiEvent, type EventColumn, type EventRow } from '../../domain/events.js';

/** SELECT list of the API columns, for queries that return EventRow. */
export const EVENT_SELECT = EVENT_COLUMNS.join(', ');

/**
 * How an event is stored: one row per statement (values: customer_id, then EVENT_COLUMNS), an id
 * already stored ignored (idempotent ingest). One row per statement on purpose: a multi-row INSERT
 * needs a statement journal (to undo a half-done statement), which SQLite spills to a temporary
 * file; measured a third slower.
 */
export const INSERT_EVENT_SQL = `INSERT INTO events (customer_id, ${EVENT_SELECT}) VALUES (?, ${EVENT_COLUMNS.map(() => '?').join(', ')})
  ON CONFLICT (id) DO NOTHING`;

/**
 * A prepared inserter of events for one customer: ignores an id that is already stored
 * (idempotent ingest). Call inside a transaction for many rows.
 */
export function eventInserter(db: Db): (customerId: string, row: EventRow) => boolean {
  const statement = db.prepare(INSERT_EVENT_SQL);
  return (customerId, row) =>
    statement.run(customerId, ...EVENT_COLUMNS.map((column) => row[column] ?? null)).changes === 1;
}

/** Inserts rows in one transaction; returns how many were new. For seeding tests and benchmarks. */
export function insertEvents(db: Db, customerId: string, rows: EventRow[]): number {
  const insert = eventInserter(db);
  return db.transaction(() => rows.reduce((added, row) => added + (insert(customerId, row) ? 1 : 0), 0))();
}
