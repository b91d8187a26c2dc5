import { EVENT_COLUMNS, REAL_COLUMNS, type EventColumn } from '../../domain/events.js';

/**
 * Events as the list shows them (spec 2.2), written as JSON by SQLite. A list read selects
 * ITEMS_JSON over an ordered, limited subquery that yields one `item` per event and gets one
 * value back: the items joined by commas, as UTF-8 bytes. On Node 20 better-sqlite3 hands a
 * row's columns over one V8 call at a time, and a page of 500 rows with 15 columns cost about
 * 1.2 ms before any serializing; one value per page allocates next to nothing on the JavaScript
 * heap and is sent as it is (bench/README.md).
 */

/** The columns the table declares NOT NULL: their members need no test. */
const REQUIRED_COLUMNS = new Set<string>(['id', 'class', 'type', 'created']);

/**
 * One member `,"name":value` of an event (`{"name":value` for the first), NULL when the column is
 * NULL: concat() skips NULL arguments, so an absent field leaves no member (the API leaves it out).
 * The table is STRICT, so a column holds its declared type: text goes through json_quote (the
 * escaping json_object applies) or, when `plain` (the row's `plain_text`: no text of the event
 * holds a character JSON escapes), between quotes as it is; `created` is an INTEGER written as it
 * is, and a REAL is written as an integer when it is whole (as JavaScript writes it; SQLite writes
 * `74.0`), else as json_quote writes it (json_object's `%!0.17g`).
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
 * An event's JSON text: its members in EVENT_COLUMNS order, absent fields left out. One concat()
 * per event rather than json_object: json_object writes `"name":null` for every absent field,
 * which then had to be cut out of the page's bytes, and concat() builds the text in one
 * allocation (`||` allocates per operand); together about 0.25 ms less per 500-event page. Texts
 * of a `plain_text` event skip json_quote: about a fifth of the statement less (bench/README.md,
 * "Issue 17: the read path"); both ways write the same bytes (test/store/plain-text.test.ts,
 * test/event-json.sqlite.test.ts).
 */
export const ITEM_JSON = `CASE WHEN plain_text = 1 THEN ${itemJson(true)} ELSE ${itemJson(false)} END`;

/**
 * The select list over a subquery of `item`s: `@prefix`, their JSON joined by commas and `@room`
 * (spaces), and their count. The subquery's ORDER BY and LIMIT keep it from being flattened into
 * the aggregate, so the items arrive, and are joined, in its order (the list tests check the
 * order page by page). The prefix (such as `{"items":[`) saves copying the items into a response
 * afterwards, and the room behind them takes the rest of the body (src/store/shared/event-items.ts).
 */
export const ITEMS_JSON = `CAST(concat(@prefix, group_concat(item, ','), @room) AS BLOB), count(*)`;
