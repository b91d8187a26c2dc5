import { describe, expect, it } from 'vitest';
import { EventListStream } from '../../../src/server/event-stream.js';
import { withText } from '../../../src/server/event-text.js';
import { itemsOf, TAIL_ROOM } from '../../../src/store/shared/event-items.js';
import { insertEvents } from '../../../src/store/sqlite/event-rows.js';
import { LocalSignals } from '../../../src/store/shared/local-signals.js';
import { SqliteEvents } from '../../../src/store/sqlite/events.js';
import { openDatabase } from '../../../src/store/sqlite/open.js';
import { EVENT_COLUMNS, STORED_EVENT_COLUMNS, storedValues } from '../../../src/domain/events.js';
import { EventJsonBytes, eventJson, realJson } from '../../../src/store/shared/event-json.js';
import { eventRow, newestFirst } from '../../helpers/events.js';

/** A blob as better-sqlite3 returns it for a read: a buffer of its own, the items followed by the room. */
function blob(text: string): Buffer {
  const length = Buffer.byteLength(text);
  const buffer = Buffer.allocUnsafeSlow(length + TAIL_ROOM);
  buffer.write(text);
  buffer.fill(' ', length);
  return buffer;
}

describe('withText', () => {
  it('writes the text into the room behind the items, in the same buffer', () => {
    const items = itemsOf([blob('[{"id":"a","created":1}'), 1], 5, '[');
    expect(items.json.toString()).toBe('[{"id":"a","created":1}');
    const page = withText(items, '],"n":1}');
    expect(page.toString()).toBe('[{"id":"a","created":1}],"n":1}');
    expect(page.buffer).toBe(items.json.buffer);
  });

  it('copies into a new buffer when the text does not fit', () => {
    const items = itemsOf([blob('[{"id":"a","created":1}'), 1], 5, '[');
    const text = `],"links":{},"é":"${'x'.repeat(TAIL_ROOM)}"}`;
    const page = withText(items, text);
    expect(page.toString()).toBe(`[{"id":"a","created":1}${text}`);
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
  const item = (id: string, created: number) => `{"id":"${id}","created":${created}}`;

  it('cuts the read-ahead item off and keys the page by its last item', () => {
    const row: [Buffer, number] = [blob(`[${item('a', 3)},${item('b', 2)},${item('c', 1)}`), 3];
    expect(itemsOf(row, 2, '[')).toEqual({ json: Buffer.from('[{"id":"a","created":3},{"id":"b","created":2}'), count: 2, more: true, last: { created: 2, id: 'b' } });
  });

  it('answers an empty read with the prefix alone, and a short one without more', () => {
    expect(itemsOf([null, 0], 2, '[')).toEqual({ json: Buffer.from('['), count: 0, more: false });
    expect(itemsOf([blob('['), 0], 2, '[')).toEqual({ json: Buffer.from('['), count: 0, more: false });
    expect(itemsOf([blob(item('a', 3)), 1], 2, '')).toEqual({ json: Buffer.from('{"id":"a","created":3}'), count: 1, more: false, last: { created: 3, id: 'a' } });
  });
});

describe('the JSON SQLite writes for a page', () => {
  it('writes numbers as JavaScript does (a whole REAL without .0) and leaves absent fields out', async () => {
    const db = openDatabase(':memory:');
    db.prepare("INSERT INTO customers (id, created) VALUES ('c', 0)").run();
    const id = '00000000-0000-4000-8000-0000000000aa';
    insertEvents(db, 'c', [eventRow({ id, created: 1_700_000_000_123, device_battery: 87, device_temperature: -3.5, scan_duration: 0.1 + 0.2, metrics_worker_steps: 0 })]);
    const items = await new SqliteEvents(db, new LocalSignals()).newestBefore('c', 0, { created: 2_000_000_000_000, id: '' }, 5, '[');
    expect(items.json.toString()).toBe(
      `[{"id":"${id}","class":"event","type":"scan","created":1700000000123,"scan_duration":0.30000000000000004,"device_battery":87,"device_temperature":-3.5,"metrics_worker_steps":0}`,
    );
    db.close();
  });

  it('writes every event as eventJson does: present fields only, awkward texts escaped, REALs as %!0.17g or whole', async () => {
    const db = openDatabase(':memory:');
    db.prepare("INSERT INTO customers (id, created) VALUES ('c', 0)").run();
    const texts = ['":null', ',"device_id":null', '{"id":', 'quote " backslash \\ slash /', 'controls \u0000\u0001\b\t\n\f\r\u001f \u007f \u2028', 'é 中 😀', ''];
    const reals = [0, -0, 74, 1 / 3, 0.1 + 0.2, 1e-7, 1e21, 2 ** 63, -(2 ** 63), 5e-324, 1.7976931348623157e308, Infinity, -Infinity, 87.5];
    const rows = Array.from({ length: 40 }, (_, i) =>
      eventRow({
        created: 1000 + i,
        type: i % 3 ? 'scan' : 'telemetry',
        scan_code: i % 4 ? texts[i % texts.length]! : null,
        scan_duration: i % 5 ? reals[i % reals.length]! : null,
        scan_decode_symbology: i % 2 ? texts[(i + 1) % texts.length]! : null,
        device_id: i % 6 ? `dev-${i}` : null,
        device_battery: i % 3 ? reals[(i + 3) % reals.length]! : null,
        device_firmware: i % 7 ? texts[(i + 2) % texts.length]! : null,
        device_temperature: i % 2 ? null : reals[(i + 5) % reals.length]!,
        gateway_id: i % 9 ? 'g' : null,
        gateway_usecase: i % 8 ? texts[(i + 3) % texts.length]! : null,
        gateway_station: i % 2 ? texts[(i + 4) % texts.length]! : null,
        metrics_worker_steps: i % 4 ? null : reals[(i + 7) % reals.length]!,
      }),
    );
    insertEvents(db, 'c', rows);
    const items = await new SqliteEvents(db, new LocalSignals()).newestBefore('c', 0, { created: 2000, id: '' }, 100, '');
    const expected = newestFirst(rows).map((row) => eventJson(EVENT_COLUMNS.map((column) => row[column])));
    expect(items.json.toString()).toBe(expected.join(','));
    expect(items.count).toBe(40);
    // The same bytes written straight as UTF-8, as the ingest writer hands events over (plain texts written as they are).
    const written = new EventJsonBytes();
    for (const row of newestFirst(rows)) {
      const values = storedValues('c', row);
      written.append(values, 1, values[STORED_EVENT_COLUMNS.indexOf('plain_text')] === 1);
    }
    expect(written.take().toString()).toBe(items.json.toString());
    db.close();
  });

  it('writes whole numbers of every length straight as bytes as eventJson writes them', () => {
    const wholes = [0, -0, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 52 + 1];
    for (let power = 1; power <= 1e15; power *= 10) wholes.push(power - 1, power, power + 1, -power, 7 * power + 3);
    const rows = wholes.map((whole) => EVENT_COLUMNS.map((column) => (column === 'created' ? Math.abs(whole) : column === 'device_battery' ? whole : null)));
    const written = new EventJsonBytes();
    for (const row of rows) written.append(['c', ...row], 1, true);
    expect(written.take().toString()).toBe(rows.map((row) => eventJson(row)).join(','));
    expect(eventJson(rows[2]!)).toBe('{"created":9007199254740991,"device_battery":9007199254740991}');
    expect(eventJson(rows[1]!)).toBe('{"created":0,"device_battery":0}');
  });

  it('writes fractions of up to 13 significant digits, of every magnitude, as SQLite writes them (most taken as JavaScript writes them)', () => {
    const db = openDatabase(':memory:');
    const sqlite = db.prepare<[number], string>('SELECT json_quote(?)').pluck();
    // A fixed pseudo-random sequence: the same values on every run.
    let seed = 7;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    const values: number[] = [0.1, 36.6, 87.5, -5.5, 1e-4, 0.00012345, 0.00097837428979, 0.001, 99.99, 123456789.0123, 1234567890123.5];
    for (let i = 0; i < 20_000; i++) {
      const digits = 1 + (i % 13);
      const exponent = (i % 24) - 4;
      values.push(Number(`${i % 2 ? '-' : ''}${(random() * 10 ** digits).toFixed(0)}e${exponent - digits}`));
    }
    const fractions = values.filter((value) => !Number.isInteger(value));
    expect(fractions.map(realJson)).toEqual(fractions.map((value) => sqlite.get(value)));
    db.close();
  });

  it('writes fractions straight as bytes as realJson writes them (those of one or two decimals digit by digit)', () => {
    const values = [0.5, -0.5, 0.05, -0.05, 0.1 + 0.2, 31.5, 31.25, -3.75, 99.99, 1.1, 2.675, 1e-7, 0.001, 12345678901.5, 99999999999.99, 100000000000.5, 2 ** 52 + 0.5, 1 / 3];
    for (let i = 1; i < 20_000; i++) values.push(i / 10, -i / 100, (i * 7919) / 100 + 1e9, i / 10 + 0.01 * (i % 3));
    const written = new EventJsonBytes();
    for (const value of values) written.append(['c', ...EVENT_COLUMNS.map((column) => (column === 'device_temperature' ? value : null))], 1, true);
    expect(written.take().toString()).toBe(values.map((value) => `{"device_temperature":${realJson(value)}}`).join(','));
  });
});
