import type { CreatedIdKey } from '../../domain/page-token.js';
import type { CellMode } from '../../domain/csv.js';
import { DEVICE_REPORTS } from '../../domain/devices.js';
import { EVENT_COLUMNS, REAL_COLUMNS, STORED_EVENT_COLUMNS, storedValues, type EventRow } from '../../domain/events.js';
import { DEVICE_MERGE_SQL, DEVICE_ROW_SELECT } from '../shared/device-merge.js';
import { csvChunkOfRows } from '../shared/event-csv.js';
import { ownBuffer, TAIL_ROOM } from '../shared/event-items.js';
import { CUSTOMERS_PER_SIGNAL, type CsvChunk, type EventItems, type EventRepository, type RawEvent } from '../ports/index.js';
import type { Database, Queryable } from './pool.js';
import { SIGNAL_CHANNEL } from './signals.js';
import { eventJson } from '../shared/event-json.js';

export const EVENT_SELECT = EVENT_COLUMNS.join(', ');
const CREATED = EVENT_COLUMNS.indexOf('created');
const ID = EVENT_COLUMNS.indexOf('id');

/** A page of the list: one backward range of (customer_id, created, id); limit + 1 rows tell whether more follow. */
const NEWEST_FIRST_SQL = `SELECT ${EVENT_SELECT} FROM events
  WHERE customer_id = $1 AND created >= $2 AND (created, id) < ($3, $4)
  ORDER BY created DESC, id DESC LIMIT $5`;

/** A page of one gateway's events: a backward range of (gateway_id, created, id); the customer is checked on the row. */
const GATEWAY_NEWEST_FIRST_SQL = `SELECT ${EVENT_SELECT} FROM events
  WHERE gateway_id = $2 AND created >= $3 AND (created, id) < ($4, $5) AND customer_id = $1
  ORDER BY created DESC, id DESC LIMIT $6`;

/** A chunk of an export: one forward range of (customer_id, created, id). */
const OLDEST_FIRST_SQL = `SELECT ${EVENT_SELECT} FROM events
  WHERE customer_id = $1 AND (created, id) > ($2, $3) AND created < $4
  ORDER BY created, id LIMIT $5`;

/** The column list and unnest() types of an event insert, in EventValues order (STORED_EVENT_COLUMNS). */
export const INSERT_COLUMNS = STORED_EVENT_COLUMNS.join(', ');
const UNNEST_TYPES = STORED_EVENT_COLUMNS.map(
  (column, i) => `$${i + 1}::${column === 'created' ? 'bigint' : column === 'created_stamped' || column === 'plain_text' ? 'int2' : REAL_COLUMNS.has(column) ? 'float8' : 'text'}[]`,
);

/**
 * The value of the newest of the new events that has one (`filter`), as domain/devices.ts
 * newerReport orders them: the latest `created`, then the greatest value (texts in byte order).
 */
const newestOf = (column: string, filter: string) =>
  `(array_agg(${column} ORDER BY created DESC, ${column}${column === 'device_firmware' ? ' COLLATE "C"' : ''} DESC NULLS LAST)${filter})[1]`;

/**
 * The devices of the new events, one row per device in DEVICE_ROW_COLUMNS order (as
 * domain/devices.ts DeviceSightings gathers them for SQLite), in key order: concurrent batches
 * of several processes then lock the device rows they share in one order.
 */
const SEEN_DEVICES_SQL = `SELECT customer_id, device_id, min(created) AS first_seen,
      ${DEVICE_REPORTS.map(({ source, always }) => {
        const filter = always ? '' : ` FILTER (WHERE ${source} IS NOT NULL)`;
        return `${newestOf(source, filter)}, max(created)${filter}`;
      }).join(',\n      ')}
    FROM inserted WHERE device_id <> '' GROUP BY customer_id, device_id ORDER BY customer_id, device_id`;

/**
 * `INSERT INTO events ... SELECT * FROM unnest(...) ON CONFLICT DO NOTHING`: many events in
 * one statement, which also writes the devices of the new events (one upsert per device,
 * shared/device-merge.ts) and announces them when any was new: one `events-committed` signal per
 * chunk of customers (the last parameter, a JSON array of arrays), sent by PostgreSQL when the
 * transaction commits. `through` is the position after this transaction's rows (event-log.ts).
 * The count of new events comes back as `inserted`, of devices written as `devices`. Rows come
 * from ingest or storedValues, which set `plain_text` (domain/events.ts). This store does not read
 * it (its list writes JSON in JavaScript); it is kept right so that an event's stored form is the
 * same in both stores.
 */
export const INSERT_EVENTS_SQL = `WITH inserted AS (
    INSERT INTO events (${INSERT_COLUMNS})
    SELECT * FROM unnest(${UNNEST_TYPES.join(', ')}) ON CONFLICT DO NOTHING
    RETURNING customer_id, device_id, created, ${DEVICE_REPORTS.map((report) => report.source).join(', ')}
  ), counted AS (SELECT count(*)::int AS inserted FROM inserted),
  devices_written AS (
    INSERT INTO devices (${DEVICE_ROW_SELECT}) ${SEEN_DEVICES_SQL}
    ${DEVICE_MERGE_SQL}
    RETURNING 1
  ),
  announced AS (
    SELECT pg_notify('${SIGNAL_CHANNEL}', json_build_object('kind', 'events-committed', 'customers', chunk,
      'through', json_build_array(pg_current_xact_id()::text::bigint + 1, 0))::text)
    FROM counted, json_array_elements($${UNNEST_TYPES.length + 1}::json) AS chunk WHERE counted.inserted > 0
  )
  SELECT inserted, (SELECT count(*)::int FROM devices_written) AS devices, (SELECT count(*) FROM announced) AS signals FROM counted`;

/** The parameters of INSERT_EVENTS_SQL: one array per column, then the customers to announce. */
export function insertParameters(events: readonly (readonly unknown[])[], customers: readonly string[]): unknown[] {
  const columns: unknown[][] = UNNEST_TYPES.map(() => new Array(events.length));
  for (let row = 0; row < events.length; row++) {
    const values = events[row]!;
    for (let column = 0; column < columns.length; column++) columns[column]![row] = values[column] ?? null;
  }
  const chunks: string[][] = [];
  for (let i = 0; i < customers.length; i += CUSTOMERS_PER_SIGNAL) chunks.push(customers.slice(i, i + CUSTOMERS_PER_SIGNAL));
  return [...columns, JSON.stringify(chunks)];
}

/** Runs INSERT_EVENTS_SQL; how many events were new, and how many devices it wrote. */
export async function insertAndAnnounce(client: Queryable, events: readonly (readonly unknown[])[], customers: readonly string[]): Promise<{ events: number; devices: number }> {
  const { rows } = await client.query<{ inserted: number; devices: number }>(INSERT_EVENTS_SQL, insertParameters(events, customers));
  return { events: rows[0]!.inserted, devices: rows[0]!.devices };
}

/** The rows (limit + 1 at most, newest first) as EventItems: JSON bytes as the SQLite store writes them. */
export function itemsOfRows(rows: unknown[][], limit: number, prefix: string): EventItems {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  // A buffer of its own (never Node's shared pool), with room behind the JSON that withText fills.
  const json = ownBuffer(prefix + items.map((item) => eventJson(item)).join(','), TAIL_ROOM);
  const lastRow = items[items.length - 1];
  return {
    json,
    count: items.length,
    more,
    ...(lastRow ? { last: { created: lastRow[CREATED] as number, id: lastRow[ID] as string } } : {}),
  };
}

/** Reads of the events table for listing and export; each is one range of an index. */
export class PgEvents implements EventRepository {
  constructor(private readonly db: Database) {}

  async newestBefore(customerId: string, start: number, before: CreatedIdKey, limit: number, prefix = ''): Promise<EventItems> {
    const rows = await this.db.queryArrays(NEWEST_FIRST_SQL, [customerId, start, before.created, before.id, limit + 1]);
    return itemsOfRows(rows, limit, prefix);
  }

  async gatewayNewestBefore(customerId: string, gatewayId: string, start: number, before: CreatedIdKey, limit: number, prefix = ''): Promise<EventItems> {
    const rows = await this.db.queryArrays(GATEWAY_NEWEST_FIRST_SQL, [customerId, gatewayId, start, before.created, before.id, limit + 1]);
    return itemsOfRows(rows, limit, prefix);
  }

  oldestAfter(customerId: string, after: CreatedIdKey, end: number, limit: number): Promise<RawEvent[]> {
    return this.db.queryArrays<RawEvent>(OLDEST_FIRST_SQL, [customerId, after.created, after.id, end, limit]);
  }

  async csvAfter(customerId: string, after: CreatedIdKey, end: number, limit: number, cells: CellMode): Promise<CsvChunk> {
    return csvChunkOfRows(await this.oldestAfter(customerId, after, end, limit), cells);
  }

  async insert(customerId: string, rows: EventRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const values = rows.map((row) => storedValues(customerId, row));
    return (await insertAndAnnounce(this.db, values, [customerId])).events;
  }
}
