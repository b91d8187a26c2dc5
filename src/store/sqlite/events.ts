import type { Statement } from 'better-sqlite3';
import type { CellMode } from '../../domain/csv.js';
import type { EventRow } from '../../domain/events.js';
import type { CreatedIdKey } from '../../domain/page-token.js';
import type { CsvChunk, EventItems, EventRepository, RawEvent } from '../ports/index.js';
import { csvChunkOfRows } from '../shared/event-csv.js';
import { itemsOf, TAIL_ROOM_TEXT } from '../shared/event-items.js';
import type { LocalSignals } from '../shared/local-signals.js';
import { CSV_RECORD, CSV_RECORDS, csvChunkOf } from './event-csv.js';
import { ITEM_JSON, ITEMS_JSON } from './event-json.js';
import { EVENT_SELECT, insertEvents } from './event-rows.js';
import type { Db } from './open.js';
import { LIMIT } from './statements.js';

/** A page of the list: one backward range of (customer_id, created, id). */
export const NEWEST_FIRST_SQL = `SELECT ${ITEMS_JSON} FROM (SELECT ${ITEM_JSON} AS item FROM events
  WHERE customer_id = @customerId AND created >= @start AND (created, id) < (@created, @id)
  ORDER BY created DESC, id DESC ${LIMIT})`;

/** A chunk of a gateway's list: one backward range of (gateway_id, created, id); the customer is checked on the row. */
// INDEXED BY: without statistics the planner takes the customer index (its rows are narrower)
// and walks every event of the customer in range; the gateway's own range is far shorter.
export const GATEWAY_NEWEST_FIRST_SQL = `SELECT ${ITEMS_JSON} FROM (SELECT ${ITEM_JSON} AS item FROM events INDEXED BY events_gateway_created
  WHERE gateway_id = @gatewayId AND created >= @start AND (created, id) < (@created, @id) AND customer_id = @customerId
  ORDER BY created DESC, id DESC ${LIMIT})`;

/** A chunk of an export: one forward range of (customer_id, created, id). */
const OLDEST_FIRST_RANGE = `FROM events
  WHERE customer_id = @customerId AND (created, id) > (@created, @id) AND created < @end
  ORDER BY created, id ${LIMIT}`;
export const OLDEST_FIRST_SQL = `SELECT ${EVENT_SELECT} ${OLDEST_FIRST_RANGE}`;
/** The same chunk as CSV records that SQLite writes (see event-csv.ts). */
export const OLDEST_FIRST_CSV_SQL = `SELECT ${CSV_RECORDS} FROM (SELECT ${CSV_RECORD} AS record ${OLDEST_FIRST_RANGE})`;

/**
 * Reads of the events table for listing (one JSON value per page, event-json.ts) and export (one
 * value of CSV records per chunk, event-csv.ts). Every read is one index range whose upper bound is
 * the row value `(created, id) < (?, ?)` alone (endKey folds the range's end into it): SQLite uses
 * one upper bound per range and would otherwise pick `created < end` and filter down to the cursor.
 */
export class SqliteEvents implements EventRepository {
  private readonly newestFirst: Statement;
  private readonly gatewayNewestFirst: Statement;
  private readonly oldestFirst: Statement;
  private readonly oldestFirstCsv: Statement;

  constructor(
    private readonly db: Db,
    private readonly signals: LocalSignals,
  ) {
    this.newestFirst = db.prepare(NEWEST_FIRST_SQL).raw(true);
    this.gatewayNewestFirst = db.prepare(GATEWAY_NEWEST_FIRST_SQL).raw(true);
    this.oldestFirst = db.prepare(OLDEST_FIRST_SQL).raw(true);
    this.oldestFirstCsv = db.prepare(OLDEST_FIRST_CSV_SQL).raw(true);
  }

  async newestBefore(customerId: string, start: number, before: CreatedIdKey, limit: number, prefix = ''): Promise<EventItems> {
    const row = this.newestFirst.get({ customerId, start, created: before.created, id: before.id, limit: limit + 1, prefix, room: TAIL_ROOM_TEXT });
    return itemsOf(row as [Buffer | null, number], limit, prefix);
  }

  async gatewayNewestBefore(customerId: string, gatewayId: string, start: number, before: CreatedIdKey, limit: number, prefix = ''): Promise<EventItems> {
    const row = this.gatewayNewestFirst.get({ customerId, gatewayId, start, created: before.created, id: before.id, limit: limit + 1, prefix, room: TAIL_ROOM_TEXT });
    return itemsOf(row as [Buffer | null, number], limit, prefix);
  }

  async oldestAfter(customerId: string, after: CreatedIdKey, end: number, limit: number): Promise<RawEvent[]> {
    return this.rawAfter(customerId, after, end, limit);
  }

  /**
   * The events oldestAfter reads, as CSV records: written by SQLite, or from the raw rows when its
   * bytes hold what it cannot write as JavaScript would (see csvChunkOf).
   */
  async csvAfter(customerId: string, after: CreatedIdKey, end: number, limit: number, cells: CellMode): Promise<CsvChunk> {
    const row = this.oldestFirstCsv.get({ customerId, created: after.created, id: after.id, end, limit }) as [Buffer | null, number];
    return csvChunkOf(row, cells) ?? csvChunkOfRows(this.rawAfter(customerId, after, end, limit), cells);
  }

  async insert(customerId: string, rows: EventRow[]): Promise<number> {
    const inserted = insertEvents(this.db, customerId, rows);
    // Committed: the live streams of this process read on.
    if (inserted > 0) this.signals.deliver({ kind: 'events-committed', customers: [customerId] });
    return inserted;
  }

  private rawAfter(customerId: string, after: CreatedIdKey, end: number, limit: number): RawEvent[] {
    return this.oldestFirst.all({ customerId, created: after.created, id: after.id, end, limit }) as RawEvent[];
  }
}
