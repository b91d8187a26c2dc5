import { EVENT_COLUMNS, REAL_COLUMNS, type EventColumn } from '../../domain/events.js';

/**
 * Events as the list shows them, written as JSON by SQLite. A list read selects ITEMS_JSON over an
 * ordered, limited subquery of one `item` per event and gets back one value, the items joined by
 * commas as UTF-8 bytes: better-sqlite3 hands a row's columns to V8 one call at a time, which cost
 * more than the serializing (docs/events.md "GET /{customer_id}/events"; bench/README.md "events").
 */

/** The columns the table declares NOT NULL: their members need no test. */
const REQUIRED_COLUMNS = new Set<string>(['id', 'class', 'type', 'created']);

/**
 * One member `,"name":value` of an event (`{"name":value` for the first), or NULL for a NULL
 * column, which concat() skips, so an absent field leaves no member. Text goes through json_quote,
 * or between quotes as it is when `plain` (no text of the event holds a character JSON escapes);
 * a whole REAL is written as an integer, as JavaScript writes it (SQLite writes `74.0`), any other
 * as json_quote writes it. The table is STRICT, so each column holds its declared type.
 */
function member(column: EventColumn, first: boolean, plain: boolean): string {
  const start = `${first ? '{' : ','}"${column}":`;
  const name = `'${start}'`;
  if (REAL_COLUMNS.has(column)) {
    return `CASE WHEN ${column} IS NULL THEN NULL WHEN ${column} = CAST(${column} AS INTEGER) THEN ${name} || CAST(${column} AS INTEGER) ELSE ${name} || json_quote(${column}) END`;
  }
  if (column === 'created') return `${name}, ${column}`;
  // `||` yields NULL when the column is NULL, which leaves the member out as the CASE below does.
  if (plain) return REQUIRED_COLUMNS.has(column) ? `'${start}"', ${column}, '"'` : `'${start}"' || ${column} || '"'`;
  return REQUIRED_COLUMNS.has(column) ? `${name}, json_quote(${column})` : `CASE WHEN ${column} IS NOT NULL THEN ${name} || json_quote(${column}) END`;
}

/** An event's JSON text as one concat() of its members, in EVENT_COLUMNS order. */
const itemJson = (plain: boolean) => `concat(${EVENT_COLUMNS.map((column, i) => member(column, i === 0, plain)).join(', ')}, '}')`;

/**
 * An event's JSON text. One concat() rather than json_object, which writes `"name":null` for every
 * absent field, and concat() builds the text in one allocation where `||` allocates per operand;
 * a `plain_text` event's texts skip json_quote (bench/README.md "events"). Both ways write the same
 * bytes (test/store/plain-text.test.ts, test/store/sqlite/event-json.sqlite.test.ts).
 */
export const ITEM_JSON = `CASE WHEN plain_text = 1 THEN ${itemJson(true)} ELSE ${itemJson(false)} END`;

/**
 * The select list over a subquery of `item`s: `@prefix`, their JSON joined by commas and `@room`
 * (spaces), and their count. The subquery's ORDER BY and LIMIT keep it from being flattened into
 * the aggregate, so the items are joined in its order. The prefix (`{"items":[`) and the room
 * behind them spare copying the items into a response afterwards (src/store/shared/event-items.ts).
 */
export const ITEMS_JSON = `CAST(concat(@prefix, group_concat(item, ','), @room) AS BLOB), count(*)`;
