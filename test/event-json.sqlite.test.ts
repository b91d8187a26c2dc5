import { describe, expect, it } from 'vitest';
import { EventListStream } from '../src/server/event-stream.js';
import { itemsOf, withText, withoutNullMembers } from '../src/store/event-items.js';
import { insertEvents } from '../src/store/sqlite/event-rows.js';
import { EventStore } from '../src/store/sqlite/events.js';
import { openDatabase } from '../src/store/sqlite/open.js';
import { eventRow } from './helpers/events.js';

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

  it('leaves a value made of `":null` thousands of times as it is (and looks back only a name long each time)', () => {
    const value = JSON.stringify('":null'.repeat(40_000));
    const json = `{"id":"x","scan_code":${value},"device_id":null,"gateway_id":"g"}`;
    expect(withoutNullMembers(Buffer.from(json)).toString()).toBe(`{"id":"x","scan_code":${value},"gateway_id":"g"}`);
  });
});

describe('EventListStream', () => {
  it('writes valid JSON when a chunk after the first comes back empty', async () => {
    const reads = [
      { json: Buffer.from('{"items":[{"id":"a","created":2}'), count: 1, more: true, last: { created: 2, id: 'a' } },
      itemsOf([null, 0], 1, ','),
    ];
    const prefixes: string[] = [];
    const stream = new EventListStream(
      async (_before, _limit, prefix) => (prefixes.push(prefix), reads.shift()!),
      { created: 9, id: '' },
      (size) => ({ size }),
    );
    let text = '';
    for await (const chunk of stream) text += String(chunk);
    expect(prefixes).toEqual(['{"items":[', ',']);
    expect(JSON.parse(text)).toEqual({ items: [{ id: 'a', created: 2 }], links: {}, metadata: { size: 1 } });
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

describe('the JSON SQLite writes for a page', () => {
  it('writes numbers as JavaScript does (a whole REAL without .0) and leaves absent fields out', () => {
    const db = openDatabase(':memory:');
    db.prepare("INSERT INTO customers (id, created) VALUES ('c', 0)").run();
    const id = '00000000-0000-4000-8000-0000000000aa';
    insertEvents(db, 'c', [eventRow({ id, created: 1_700_000_000_123, device_battery: 87, device_temperature: -3.5, scan_duration: 0.1 + 0.2, metrics_worker_steps: 0 })]);
    const items = new EventStore(db).newestBefore('c', 0, { created: 2_000_000_000_000, id: '' }, 5, '[');
    expect(items.json.toString()).toBe(
      `[{"id":"${id}","class":"event","type":"scan","created":1700000000123,"scan_duration":0.30000000000000004,"device_battery":87,"device_temperature":-3.5,"metrics_worker_steps":0}`,
    );
    db.close();
  });
});
