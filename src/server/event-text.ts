import type { EventItems } from '../store/ports/index.js';

/**
 * The items' JSON followed by `text`. The text goes into the room a store's read leaves behind
 * the JSON in its buffer (TAIL_ROOM, src/store/shared/event-items.ts) when it fits, so a page
 * costs no second buffer of its size (each large buffer brings V8's next full collection closer).
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
