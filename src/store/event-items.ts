import type { CreatedIdKey } from '../domain/page-token.js';
import { EVENT_COLUMNS } from '../domain/events.js';
import type { EventItems } from './ports.js';

/**
 * The bytes of a page of events, shared by both stores: a store's read yields the prefix and the
 * items' JSON texts joined by commas (each item starting `{"id":`), written by the database; these
 * functions cut the extra item, drop the `"name":null` members and append the rest of the body.
 */

const ITEM_START = Buffer.from('{"id":');
const ITEM_SEPARATOR = Buffer.from(',{"id":');
const NULL_VALUE = Buffer.from('":null');
const COMMA = 0x2c;
const QUOTE = 0x22;

/**
 * The items of a read that asked the store for `limit + 1` events: a read of one more than the
 * page tells whether another page exists, without an empty last page. `id` comes first in
 * every item and is never NULL, and a quote inside a JSON string is always escaped, so `{"id":`
 * only ever starts an item.
 */
export function itemsOf(row: [Buffer | null, number], limit: number, prefix: string): EventItems {
  let [json, count] = row;
  if (json === null || count === 0) return { json: ownBuffer(prefix), count: 0, more: false };
  // better-sqlite3 gives each blob its own memory; should that ever change, copy once rather
  // than let withText write into memory another buffer uses.
  if (json.byteOffset !== 0 || json.buffer.byteLength !== json.length) {
    const copy = ownBuffer(json.length);
    json.copy(copy);
    json = copy;
  }
  const more = count > limit;
  if (more) {
    json = json.subarray(0, json.lastIndexOf(ITEM_SEPARATOR));
    count = limit;
  }
  const { created, id } = JSON.parse(json.toString('utf8', json.lastIndexOf(ITEM_START))) as CreatedIdKey;
  return { json: withoutNullMembers(json), count, more, last: { created, id } };
}

/** The longest column name: a null member's name is never longer. */
const LONGEST_NAME = Math.max(...EVENT_COLUMNS.map((column) => column.length));

/**
 * The JSON with its `,"name":null` members removed, in place: the API leaves absent fields out.
 * A match counts only when a comma, a quote and a column-like name (`a-z`, `_`) precede
 * `":null`; inside a string every quote is escaped, so `":null` there is never preceded by
 * `,"name`. The look back is at most a column name long, so the work stays linear even for a
 * string made of `":null` repeated (a gateway could send one).
 */
export function withoutNullMembers(json: Buffer): Buffer {
  let write = -1;
  let from = 0;
  for (let at = json.indexOf(NULL_VALUE); at >= 0; at = json.indexOf(NULL_VALUE, at + NULL_VALUE.length)) {
    const comma = nullMemberStart(json, at);
    if (comma < 0) continue;
    if (write < 0) write = comma;
    else {
      json.copyWithin(write, from, comma);
      write += comma - from;
    }
    from = at + NULL_VALUE.length;
  }
  if (write < 0) return json;
  json.copyWithin(write, from);
  return json.subarray(0, write + json.length - from);
}

/** Where the member `,"name":null` whose `":null` is at `at` starts (its comma), or -1 if `at` is not the end of such a name. */
function nullMemberStart(json: Buffer, at: number): number {
  let quote = at - 1;
  const limit = Math.max(0, at - 1 - LONGEST_NAME);
  while (quote >= limit && isNameByte(json[quote]!)) quote--;
  if (quote === at - 1 || quote < 1 || json[quote] !== QUOTE || json[quote - 1] !== COMMA) return -1;
  return quote - 1;
}

function isNameByte(byte: number): boolean {
  return (byte >= 0x61 && byte <= 0x7a) || byte === 0x5f;
}

/**
 * The items' JSON followed by `text`. Cutting out absent fields leaves unused room behind the
 * JSON in its buffer (tens of KB for a page): the text goes there when it fits, so a page costs
 * no second buffer of its size (each large buffer brings V8's next full collection closer).
 * Only for EventItems: another Buffer may share its memory with others (Node's pool).
 */
export function withText(items: EventItems, text: string): Buffer {
  const { json } = items;
  const length = Buffer.byteLength(text);
  if (json.byteOffset + json.length + length > json.buffer.byteLength) return Buffer.concat([json, Buffer.from(text)]);
  const whole = Buffer.from(json.buffer, json.byteOffset, json.length + length);
  whole.write(text, json.length);
  return whole;
}

/** A buffer of its own with the text, or of the given size (Buffer.from would take small ones from the shared pool). */
function ownBuffer(content: string | number): Buffer {
  if (typeof content === 'number') return Buffer.allocUnsafeSlow(content);
  const buffer = Buffer.allocUnsafeSlow(Buffer.byteLength(content));
  buffer.write(content);
  return buffer;
}
