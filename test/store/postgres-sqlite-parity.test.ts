// The PostgreSQL store against the SQLite store on the same rows: identical JSON bytes of every
// event page. The SQLite side is reached only through `openSqliteEvents` below, so that this file
// follows the SQLite store wherever it moves (src/store/sqlite/).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventRow } from '../../src/domain/events.js';
import type { CreatedIdKey } from '../../src/domain/page-token.js';
import { openStore, sqliteLocator } from '../../src/store/open.js';
import type { EventItems, Store } from '../../src/store/ports/index.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';

interface SqliteEvents {
  insert(customerId: string, rows: EventRow[]): Promise<number>;
  newestBefore(customerId: string, start: number, before: CreatedIdKey, limit: number, prefix: string): Promise<EventItems>;
  gatewayNewestBefore(customerId: string, gatewayId: string, start: number, before: CreatedIdKey, limit: number, prefix: string): Promise<EventItems>;
  close(): Promise<void>;
}

/** The SQLite store's event reads over a new database file, through the seam. */
async function openSqliteEvents(dir: string): Promise<SqliteEvents> {
  const store = await openStore(sqliteLocator(dir), 'server');
  return {
    insert: (customerId, rows) => store.events.insert(customerId, rows),
    newestBefore: (...args) => store.events.newestBefore(...args),
    gatewayNewestBefore: (...args) => store.events.gatewayNewestBefore(...args),
    close: () => store.close(),
  };
}

const CUSTOMER = 'acme';
const T0 = Date.UTC(2024, 5, 1);

// Numbers where the two ways of writing them part: JavaScript's shortest form vs SQLite's %!.17g.
const REALS = [
  0.25, 74, -0, 1 / 3, 2 / 3, 0.1, 0.1 + 0.2, 100.5, 1e-5, 1e-4, 2.5e-5, 1e-7, 0.001234, 123456.789, 1e15 + 0.5, 1e16 + 2,
  1e21, 1e22, 12345678901234567890, 2 ** 63, -(2 ** 63), 2 ** 63 - 1024, 2 ** 60, 5e-324, 1.7976931348623157e308, -1.25e-10,
  4.35, 49.47, 3.3333333333333332e99, 98765.4321e10, 1234567.1, 23.45, 87.5, -12.75, 0.000999, 99.99999999999999,
];
const TEXTS = [
  'plain', '', 'quote " and backslash \\ and slash /', 'controls \u0001\u0008\t\n\u000b\f\r\u001f end', 'del \u007f', 'line sep \u2028 \u2029',
  'é ü ß 中文', 'emoji 😀', 'replacement \ufffd', '":null', ',"x":null', '{"id":', '<script>&amp;</script>', ' leading and trailing ',
];

function rows(): EventRow[] {
  const out: EventRow[] = [];
  for (let i = 0; i < 60; i++) {
    const pick = <T>(list: T[], k: number) => list[(i * 7 + k) % list.length]!;
    const sparse = i % 5 === 0;
    out.push({
      id: `${(i % 3).toString(16)}0000000-0000-4000-8000-${i.toString().padStart(12, '0')}`,
      class: i % 4 === 0 ? 'device' : 'event',
      type: i % 3 === 0 ? 'telemetry' : 'scan',
      // Several events share a `created`: the id orders them.
      created: T0 + Math.floor(i / 4) * 1000,
      scan_code: sparse ? null : pick(TEXTS, 0),
      scan_duration: sparse ? null : pick(REALS, 1),
      scan_decode_symbology: i % 2 ? pick(TEXTS, 2) : null,
      device_id: `dev-${i}`,
      device_battery: pick(REALS, 3),
      device_firmware: i % 3 ? null : pick(TEXTS, 4),
      device_temperature: pick(REALS, 5),
      gateway_id: i % 2 ? 'gw-1' : 'gw-2',
      gateway_usecase: sparse ? null : 'line',
      gateway_station: pick(TEXTS, 6),
      metrics_worker_steps: i % 2 ? null : pick(REALS, 7),
    });
  }
  return out;
}

describePostgres('PostgreSQL event pages are byte-identical to the SQLite store', () => {
  let dir: string;
  let sqlite: SqliteEvents;
  let postgres: Store;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'scanhub-parity-'));
    sqlite = await openSqliteEvents(dir);
    postgres = await openPostgresStore({ kind: 'postgres', url: await freshDatabase(), masterKey: new Uint8Array(32) }, 'server');
    const all = rows();
    await sqlite.insert(CUSTOMER, all);
    expect(await postgres.events.insert(CUSTOMER, all)).toBe(all.length);
  });
  afterAll(async () => {
    await sqlite?.close();
    await postgres?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every page of the list, for page sizes 1, 7 and 100', async () => {
    for (const limit of [1, 7, 100]) {
      let before: CreatedIdKey = { created: T0 + 1e9, id: '' };
      let pages = 0;
      for (;;) {
        const expected = await sqlite.newestBefore(CUSTOMER, T0 + 2000, before, limit, '{"items":[');
        const actual = await postgres.events.newestBefore(CUSTOMER, T0 + 2000, before, limit, '{"items":[');
        expect(actual.json.toString()).toBe(expected.json.toString());
        expect({ count: actual.count, more: actual.more, last: actual.last }).toEqual({ count: expected.count, more: expected.more, last: expected.last });
        pages++;
        if (!expected.more) break;
        before = expected.last!;
      }
      expect(pages).toBe(Math.ceil(52 / limit));
    }
  });

  it('every page of one gateway, and an empty page', async () => {
    let before: CreatedIdKey = { created: T0 + 1e9, id: '' };
    for (;;) {
      const expected = await sqlite.gatewayNewestBefore(CUSTOMER, 'gw-1', 0, before, 4, '');
      const actual = await postgres.events.gatewayNewestBefore(CUSTOMER, 'gw-1', 0, before, 4, '');
      expect(actual.json.toString()).toBe(expected.json.toString());
      expect(actual.last).toEqual(expected.last);
      if (!expected.more) break;
      before = expected.last!;
    }
    const empty = await postgres.events.newestBefore('nobody', 0, before, 10, '{"items":[');
    expect(empty.json.toString()).toBe((await sqlite.newestBefore('nobody', 0, before, 10, '{"items":[')).json.toString());
  });
});
