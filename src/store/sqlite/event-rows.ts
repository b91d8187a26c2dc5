import { DeviceSightings } from '../../domain/devices.js';
import { EVENT_COLUMNS, STORED_EVENT_COLUMNS, storedValues, type EventRow } from '../../domain/events.js';
import { deviceCacheOf, DeviceWriter } from './devices.js';
import type { Db } from './open.js';

export { EVENT_COLUMNS, toApiEvent, type EventColumn, type EventRow } from '../../domain/events.js';

/** SELECT list of the API columns, for queries that return EventRow. */
export const EVENT_SELECT = EVENT_COLUMNS.join(', ');

const STORED_SELECT = STORED_EVENT_COLUMNS.join(', ');
const STORED_PARAMETERS = STORED_EVENT_COLUMNS.map(() => '?').join(', ');

/**
 * How an event is stored, one already stored ignored (the UNIQUE indexes of migration 0014). One row
 * per statement: a multi-row INSERT needs a statement journal, which SQLite spills to a temporary
 * file (bench/README.md "ingest"). A row marked `plain_text` must hold no text JSON escapes, or the
 * list would write it unescaped: rows come only from ingest or storedValues, which set it (a rule
 * test/server/conventions.test.ts keeps).
 */
export const INSERT_EVENT_SQL = `INSERT INTO events (${STORED_SELECT}) VALUES (${STORED_PARAMETERS}) ON CONFLICT DO NOTHING`;

/** The same with the seq given first (EventInserter). */
const INSERT_EVENT_AT_SQL = `INSERT INTO events (seq, ${STORED_SELECT}) VALUES (?, ${STORED_PARAMETERS}) ON CONFLICT DO NOTHING`;

/** What one call of EventInserter.insertAll wrote. */
export interface InsertedEvents {
  /** New events; the others were stored already. */
  events: number;
  /** Devices written: at most one per device of the new events (sqlite/devices.ts DeviceWriter). */
  devices: number;
}

/**
 * Inserts events so that seq keeps following commit order (migration 0013): when the event with
 * the largest seq was deleted, SQLite would give its seq again, so the first new event is
 * numbered above the mark instead; after it SQLite's own numbering is right again. The mark is
 * looked up once per call (one point read), not per event. Call inside a write transaction that
 * has written already or began IMMEDIATE: a read before the first write would have to upgrade.
 * The devices of the new events are written in the same transaction, once per device per call
 * (migration 0018): events already stored are not counted again.
 */
export class EventInserter {
  private readonly insert;
  private readonly insertAt;
  private readonly mark;
  private readonly devices;

  constructor(db: Db) {
    this.insert = db.prepare(INSERT_EVENT_SQL);
    this.insertAt = db.prepare(INSERT_EVENT_AT_SQL);
    this.mark = db.prepare<[], number>(`SELECT seq FROM event_seq_mark WHERE id = 1 AND seq > coalesce((SELECT max(seq) FROM events), 0)`).pluck();
    this.devices = new DeviceWriter(db);
  }

  /**
   * Inserts rows (values in STORED_EVENT_COLUMNS order), the rest being events already stored, and
   * writes their devices; `inserted` hears of each new row with its seq, in seq order.
   */
  insertAll(rows: readonly (readonly unknown[])[], inserted?: (row: readonly unknown[], seq: number) => void): InsertedEvents {
    const sightings = new DeviceSightings();
    let count = 0;
    let i = 0;
    const mark = this.mark.get();
    if (mark !== undefined) {
      for (; i < rows.length && count === 0; i++) {
        const result = this.insertAt.run([mark + 1, ...rows[i]!]);
        if (result.changes === 0) continue;
        count++;
        sightings.add(rows[i]!);
        inserted?.(rows[i]!, Number(result.lastInsertRowid));
      }
    }
    for (; i < rows.length; i++) {
      const result = this.insert.run(rows[i]!);
      if (result.changes === 0) continue;
      count++;
      sightings.add(rows[i]!);
      inserted?.(rows[i]!, Number(result.lastInsertRowid));
    }
    return { events: count, devices: this.devices.write(sightings.rows()) };
  }
}

/** Inserts rows of one customer in one transaction; returns how many were new. For tests, benchmarks and the store's `events.insert`. */
export function insertEvents(db: Db, customerId: string, rows: EventRow[]): number {
  const inserter = new EventInserter(db);
  const values = rows.map((row) => storedValues(customerId, row));
  try {
    return db.transaction(() => inserter.insertAll(values).events).immediate();
  } catch (error) {
    // The devices rolled back with the events; the connection's cache may hold their rows as written.
    deviceCacheOf(db).clear();
    throw error;
  }
}
