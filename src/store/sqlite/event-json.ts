import { EVENT_COLUMNS } from './event-rows.js';

/**
 * Events as the list shows them (spec 2.2), written as JSON by SQLite. A list read selects
 * ITEMS_JSON over an ordered, limited subquery that yields one `item` per event and gets one
 * value back: the items joined by commas, as UTF-8 bytes. On Node 20 better-sqlite3 hands a
 * row's columns over one V8 call at a time, and a page of 500 rows with 15 columns cost about
 * 1.2 ms before any serializing; one value per page costs about 0.8 ms with the JSON written,
 * allocates next to nothing on the JavaScript heap, and is sent as it is (bench/README.md).
 */

/** The REAL columns: SQLite writes a whole REAL as `74.0`, JSON.stringify (and the CSV export) as `74`. */
const REAL_COLUMNS = new Set<string>(['scan_duration', 'device_battery', 'device_temperature', 'metrics_worker_steps']);

/** A column as json_object should see it: a whole REAL as an INTEGER, so that it is written `74` as JavaScript does. */
function jsonValue(column: string): string {
  return REAL_COLUMNS.has(column) ? `iif(${column} = CAST(${column} AS INTEGER), CAST(${column} AS INTEGER), ${column})` : column;
}

/** An event's JSON text: `json_object` of the columns in EVENT_COLUMNS order; NULL columns become `"name":null`. */
export const ITEM_JSON = `json_object(${EVENT_COLUMNS.map((column) => `'${column}', ${jsonValue(column)}`).join(', ')})`;

/**
 * The select list over a subquery of `item`s: `@prefix` and their JSON joined by commas, and
 * their count. The subquery's ORDER BY and LIMIT keep it from being flattened into the aggregate,
 * so the items arrive, and are joined, in its order (the list tests check the order page by page).
 * The prefix (such as `{"items":[`) saves copying the items into a response afterwards.
 */
export const ITEMS_JSON = `CAST(@prefix || group_concat(item, ',') AS BLOB), count(*)`;

