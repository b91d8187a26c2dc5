import type { CreatedIdKey } from '../../domain/page-token.js';
import type { EventItems } from '../ports/index.js';

/**
 * The bytes of a page of events, shared by both stores: a store's read yields the prefix, the
 * items' JSON texts joined by commas (each item starting `{"id":`, absent fields left out), written
 * by the database, and TAIL_ROOM bytes of room; these functions cut the extra item, and the server
 * writes the rest of the body into the room (src/server/event-text.ts).
 */

const ITEM_START = Buffer.from('{"id":');
const ITEM_SEPARATOR = Buffer.from(',{"id":');

/**
 * Bytes a read leaves behind the items for the rest of the body (src/server/event-text.ts): a
 * page's links and metadata take about 600 (a longer customer id or event id more; then it copies once).
 */
export const TAIL_ROOM = 1024;
/** The room as the text a store appends (spaces: should it ever be sent, it is still JSON). */
export const TAIL_ROOM_TEXT = ' '.repeat(TAIL_ROOM);

/**
 * The items of a read that asked the store for `limit + 1` events, given as the prefix, the items
 * and TAIL_ROOM bytes of room: a read of one more than the page tells whether another page exists,
 * without an empty last page. `id` comes first in every item and is never NULL, and a quote
 * inside a JSON string is always escaped, so `{"id":` only ever starts an item.
 */
export function itemsOf(row: [Buffer | null, number], limit: number, prefix: string): EventItems {
  let [bytes, count] = row;
  if (bytes === null || count === 0) return { json: ownBuffer(prefix, TAIL_ROOM), count: 0, more: false };
  // better-sqlite3 gives each blob its own memory; should that ever change, copy once rather
  // than let the server's withText write into memory another buffer uses.
  if (bytes.byteOffset !== 0 || bytes.buffer.byteLength !== bytes.length) {
    const copy = Buffer.allocUnsafeSlow(bytes.length);
    bytes.copy(copy);
    bytes = copy;
  }
  let json = bytes.subarray(0, bytes.length - TAIL_ROOM);
  const more = count > limit;
  if (more) {
    json = json.subarray(0, json.lastIndexOf(ITEM_SEPARATOR));
    count = limit;
  }
  const { created, id } = JSON.parse(json.toString('utf8', json.lastIndexOf(ITEM_START))) as CreatedIdKey;
  return { json, count, more, last: { created, id } };
}

/**
 * A buffer of its own holding the text, with `room` bytes behind it (Buffer.from would take small
 * ones from the shared pool); the view returned covers the text.
 */
export function ownBuffer(text: string, room = 0): Buffer {
  const length = Buffer.byteLength(text);
  const buffer = Buffer.allocUnsafeSlow(length + room);
  buffer.write(text);
  return buffer.subarray(0, length);
}
