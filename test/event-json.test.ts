import { describe, expect, it } from 'vitest';
import { itemsOf, withText, withoutNullMembers } from '../src/store/event-json.js';

/** A blob as better-sqlite3 returns it: a buffer of its own. */
function blob(text: string): Buffer {
  const buffer = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  buffer.write(text);
  return buffer;
}

describe('withText', () => {
  it('writes the text into the room the cut-out null members left, in the same buffer', () => {
    const items = itemsOf([blob('[{"id":"a","created":1,"x":null,"y":null}'), 1], 5, '[');
    expect(items.json.toString()).toBe('[{"id":"a","created":1}');
    const page = withText(items, '],"n":1}');
    expect(page.toString()).toBe('[{"id":"a","created":1}],"n":1}');
    expect(page.buffer).toBe(items.json.buffer);
  });

  it('copies into a new buffer when the text does not fit', () => {
    const items = itemsOf([blob('[{"id":"a","created":1}'), 1], 5, '[');
    const page = withText(items, '],"links":{},"é":1}');
    expect(page.toString()).toBe('[{"id":"a","created":1}],"links":{},"é":1}');
    expect(page.buffer).not.toBe(items.json.buffer);
    expect(items.json.toString()).toBe('[{"id":"a","created":1}');
  });

  it('never writes into memory it does not own: an empty page is a buffer of its own, not one from the shared pool', () => {
    const items = itemsOf([null, 0], 5, '{"items":[');
    // Were the prefix in the pool, this would lie right behind it.
    const neighbour = Buffer.from('neighbour');
    const page = withText(items, '],"links":{}}');
    expect(page.toString()).toBe('{"items":[],"links":{}}');
    expect(neighbour.toString()).toBe('neighbour');
  });
});

describe('withoutNullMembers', () => {
  it.each([
    ['{"id":"x","a":null,"b":1,"c":null}', '{"id":"x","b":1}'],
    ['{"id":"x","s":"a\\":null","t":null}', '{"id":"x","s":"a\\":null"}'],
    ['{"id":"x","s":",\\"u\\":null"}', '{"id":"x","s":",\\"u\\":null"}'],
    ['{"id":"x","b":2}', '{"id":"x","b":2}'],
  ])('%s -> %s', (json, expected) => {
    expect(withoutNullMembers(Buffer.from(json)).toString()).toBe(expected);
  });
});

describe('itemsOf', () => {
  const item = (id: string, created: number) => `{"id":"${id}","created":${created},"x":null}`;

  it('cuts the read-ahead item off and keys the page by its last item', () => {
    const row: [Buffer, number] = [blob(`[${item('a', 3)},${item('b', 2)},${item('c', 1)}`), 3];
    expect(itemsOf(row, 2, '[')).toEqual({ json: Buffer.from('[{"id":"a","created":3},{"id":"b","created":2}'), count: 2, more: true, last: { created: 2, id: 'b' } });
  });

  it('answers an empty read with the prefix alone, and a short one without more', () => {
    expect(itemsOf([null, 0], 2, '[')).toEqual({ json: Buffer.from('['), count: 0, more: false });
    expect(itemsOf([blob(item('a', 3)), 1], 2, '')).toEqual({ json: Buffer.from('{"id":"a","created":3}'), count: 1, more: false, last: { created: 3, id: 'a' } });
  });
});
