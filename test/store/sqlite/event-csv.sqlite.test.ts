// The CSV records SQLite writes for exports (src/store/sqlite/event-csv.ts) against the records
// JavaScript writes from raw rows (src/store/shared/event-csv.ts, the PostgreSQL store's and the
// fallback's): the same bytes and the same chunk keys, chunk by chunk, in both cell modes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CellMode } from '../../../src/domain/csv.js';
import type { CreatedIdKey } from '../../../src/domain/page-token.js';
import { csvChunkOfRows } from '../../../src/store/shared/event-csv.js';
import { LocalSignals } from '../../../src/store/shared/local-signals.js';
import { OLDEST_FIRST_CSV_SQL, SqliteEvents } from '../../../src/store/sqlite/events.js';
import { csvChunkOf } from '../../../src/store/sqlite/event-csv.js';
import { insertEvents } from '../../../src/store/sqlite/event-rows.js';
import { openDatabase, type Db } from '../../../src/store/sqlite/open.js';
import { eventRow } from '../../helpers/events.js';

const TEXTS = [
  'plain', '', 'comma, inside', 'quote " inside', '"quoted"', 'line\nfeed', 'carriage\rreturn', 'crlf\r\n',
  '=SUM(A1)', '+1', '-1', '@user', '\tTab', '\rCR first', "'apostrophe", ' leading space', 'é ü 中文 😀',
  'nul \u0000 inside', 'line sep \u2028', '=,"both"',
];
// Whole numbers, fractions SQL writes itself, and numbers it leaves to JavaScript (exponents, 16-17 digits, infinities).
const REALS = [
  0, -0, 74, -5, 2 ** 53 - 1, 2 ** 53, -(2 ** 53), 2 ** 60, 1e21, 0.5, 25.5, -3.25, 0.0001, -0.0001, 0.00009, 1e-7, 123456.789,
  1e15 + 0.5, 1 / 3, 0.1 + 0.2, 21.299999999999997, 5e-324, 1.7976931348623157e308, Infinity, -Infinity,
];

function rows(count: number) {
  return Array.from({ length: count }, (_, i) =>
    eventRow({
      id: `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`,
      created: 1000 + Math.floor(i / 3),
      type: i % 3 ? 'scan' : 'telemetry',
      scan_code: i % 4 ? TEXTS[i % TEXTS.length]! : null,
      scan_duration: i % 5 ? REALS[i % REALS.length]! : null,
      scan_decode_symbology: i % 2 ? TEXTS[(i * 7) % TEXTS.length]! : null,
      device_id: i % 6 ? `dev-${i}` : null,
      device_battery: i % 3 ? REALS[(i * 5) % REALS.length]! : null,
      device_firmware: i % 7 ? TEXTS[(i * 3) % TEXTS.length]! : null,
      device_temperature: i % 2 ? null : REALS[(i * 11) % REALS.length]!,
      gateway_id: i % 9 ? 'g' : null,
      gateway_usecase: i % 8 ? TEXTS[(i * 13) % TEXTS.length]! : null,
      gateway_station: `Station ${i % 20}`,
      metrics_worker_steps: i % 4 ? null : REALS[(i * 17) % REALS.length]!,
    }),
  );
}

describe('CSV records written by SQLite', () => {
  let db: Db;
  let store: SqliteEvents;
  beforeAll(() => {
    db = openDatabase(':memory:');
    db.prepare("INSERT INTO customers (id, created) VALUES ('c', 0)").run();
    insertEvents(db, 'c', rows(600));
    store = new SqliteEvents(db, new LocalSignals());
  });
  afterAll(() => db.close());

  /** Every chunk of the customer's events, each as SQLite writes it and as JavaScript does from the raw rows. */
  async function chunksBothWays(customerId: string, cells: CellMode, limit: number) {
    const chunks: { sqlite: string; javascript: string; last: CreatedIdKey | undefined; count: number; fast: boolean }[] = [];
    let after: CreatedIdKey = { created: 0, id: '' };
    for (;;) {
      const fast = csvChunkOf(db.prepare(OLDEST_FIRST_CSV_SQL).raw(true).get({ customerId, created: after.created, id: after.id, end: 1e15, limit }) as [Buffer | null, number], cells);
      const sqlite = await store.csvAfter(customerId, after, 1e15, limit, cells);
      const javascript = csvChunkOfRows(await store.oldestAfter(customerId, after, 1e15, limit), cells);
      chunks.push({ sqlite: sqlite.csv.toString(), javascript: javascript.csv.toString(), last: sqlite.last, count: sqlite.count, fast: fast !== undefined });
      expect(sqlite.last).toEqual(javascript.last);
      expect(sqlite.count).toBe(javascript.count);
      if (!sqlite.last || sqlite.count < limit) return chunks;
      after = sqlite.last;
    }
  }

  it.each(['safe', 'raw'] as const)('are the bytes JavaScript writes from the raw rows, cells %s, chunk by chunk', async (cells) => {
    const chunks = await chunksBothWays('c', cells, 64);
    expect(chunks.map((chunk) => chunk.sqlite)).toEqual(chunks.map((chunk) => chunk.javascript));
    expect(chunks.reduce((sum, chunk) => sum + chunk.count, 0)).toBe(600);
    // None of these needed the raw rows: the awkward cells are rewritten within SQLite's chunks.
    expect(chunks.every((chunk) => chunk.fast)).toBe(true);
  });

  it('defuses formulas only in safe cells, and never in numbers', async () => {
    const [chunk] = await chunksBothWays('c', 'safe', 600);
    expect(chunk!.sqlite).toContain(`,'=SUM(A1),`);
    expect(chunk!.sqlite).toContain(`,"'=,""both""",`);
    expect(chunk!.sqlite).toContain(',-5,');
    const [raw] = await chunksBothWays('c', 'raw', 600);
    expect(raw!.sqlite).toContain(',=SUM(A1),');
    expect(raw!.sqlite).toContain(',"=,""both""",');
  });

  it('leaves a chunk whose text is not UTF-8, or holds a byte it uses as a tag, to the raw rows, with the same bytes', async () => {
    const insert = db.prepare(
      "INSERT INTO events (customer_id, id, class, type, created, scan_code) VALUES ('odd', ?, 'event', 'scan', ?, CAST(? AS TEXT))",
    );
    insert.run('a', 1, Buffer.from([0x61, 0xff, 0x62])); // a tag byte inside text
    insert.run('b', 2, Buffer.from([0xc3])); // a truncated UTF-8 sequence
    insert.run('c', 3, Buffer.from('fine'));
    for (const cells of ['safe', 'raw'] as const) {
      const [chunk] = await chunksBothWays('odd', cells, 10);
      expect(chunk!.fast).toBe(false);
      expect(chunk!.sqlite).toBe(chunk!.javascript);
      expect(chunk!.sqlite).toBe('a,event,scan,1,a\ufffdb,,,,,,,,,,\r\nb,event,scan,2,\ufffd,,,,,,,,,,\r\nc,event,scan,3,fine,,,,,,,,,,\r\n');
    }
  });

  it('answers an empty chunk past the end', async () => {
    expect(await store.csvAfter('c', { created: 1e12, id: '' }, 1e15, 10, 'safe')).toEqual({ csv: Buffer.alloc(0), count: 0 });
    expect(await store.csvAfter('nobody', { created: 0, id: '' }, 1e15, 10, 'raw')).toEqual({ csv: Buffer.alloc(0), count: 0 });
  });
});
