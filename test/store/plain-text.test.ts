// `plain_text` (domain/events.ts, migrations SQLite 0015 and PostgreSQL 0010): 1 when none of an
// event's texts holds a character JSON escapes, which lets SQLite write the list's JSON of those
// texts without json_quote. Over both stores: which events ingest and events.insert mark, and that
// the list's bytes are the same whichever way an event is written, also for events stored before
// the column existed (NULL).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toApiEvent, type EventRow } from '../../src/domain/events.js';
import type { IngestMessage } from '../../src/domain/ingest.js';
import { openStore, sqliteLocator } from '../../src/store/open.js';
import type { Store } from '../../src/store/ports/index.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { eventRow } from '../helpers/events.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';
import { runSql, runSqliteSql } from '../helpers/test-store.js';

const T0 = 1_800_000_000_000;

/** A store, and SQL run on its database over another connection: the rows of a query. */
interface Opened {
  store: Store;
  query(sql: string): Promise<Record<string, unknown>[]>;
}

/** One MQTT message as the gateway sent these bytes. */
const raw = (gatewayId: string, text: string, receivedAt = T0): IngestMessage => ({ gatewayId, receivedAt, payload: Buffer.from(text) });

function contract(open: () => Promise<Opened>): void {
  let store: Store;
  let query: Opened['query'];
  beforeAll(async () => {
    ({ store, query } = await open());
    await store.customers.createWithAdmin('acme', { id: 'admin-acme', customer_id: 'acme', email: 'admin@acme.example', roles: ['ADMIN_ROLE'], created: T0 }, T0);
    await store.gateways.createAll(
      'acme',
      [
        { id: 'gw-plain', name: 'P', usecase: 'picking', station: 'Station 1' },
        { id: 'gw-quoted', name: 'Q', usecase: 'picking', station: 'Dock "B"' },
      ],
      T0,
    );
  });
  afterAll(async () => {
    await store?.close();
  });

  /** `plain_text` of each event, by scan code. */
  async function marks(): Promise<Record<string, unknown>> {
    const rows = await query(`SELECT scan_code, plain_text FROM events WHERE customer_id = 'acme' ORDER BY scan_code`);
    return Object.fromEntries(rows.map((row) => [row.scan_code, row.plain_text === null ? null : Number(row.plain_text)]));
  }

  /** The customer's whole list as the API writes its items. */
  async function listed(): Promise<string> {
    return (await store.events.newestBefore('acme', 0, { created: T0 + 1e9, id: '' }, 500, '')).json.toString();
  }

  it('ingest marks an event plain only when its message has no backslash and its gateway no escaped character; the list writes each as JSON.stringify does', async () => {
    const result = await store.ingest.commit([
      raw('gw-plain', JSON.stringify({ type: 'scan', created: T0 + 1, scan_code: 'A-plain', device_id: 'M001 é 中 😀', scan_duration: 74 })),
      raw('gw-plain', JSON.stringify({ type: 'scan', created: T0 + 2, scan_code: 'B-quote "x"' })),
      raw('gw-plain', JSON.stringify({ type: 'scan', created: T0 + 3, scan_code: 'C-gs1 \u001d01 \\ tab\t' })),
      // An escape of a plain character: the text is plain, the message is not; marked as not plain.
      raw('gw-plain', `{"type":"scan","created":${T0 + 4},"scan_code":"D-escaped \\u0041"}`),
      // A backslash elsewhere in the message: every event of it goes the escaping way.
      raw('gw-plain', JSON.stringify([{ type: 'scan', created: T0 + 5, scan_code: 'E-neighbour' }, { type: 'scan', created: T0 + 6, scan_code: 'F-slash \\' }])),
      raw('gw-quoted', JSON.stringify({ type: 'telemetry', created: T0 + 7, scan_code: 'G-station', device_battery: 87.5 })),
    ]);
    expect([result.events, result.duplicates]).toEqual([7, 0]);
    expect(await marks()).toEqual({
      'A-plain': 1,
      'B-quote "x"': null,
      'C-gs1 \u001d01 \\ tab\t': null,
      'D-escaped A': null,
      'E-neighbour': null,
      'F-slash \\': null,
      'G-station': null,
    });
    const expected = [
      { created: T0 + 7, scan_code: 'G-station', type: 'telemetry', device_battery: 87.5, gateway_id: 'gw-quoted', gateway_station: 'Dock "B"' },
      { created: T0 + 6, scan_code: 'F-slash \\' },
      { created: T0 + 5, scan_code: 'E-neighbour' },
      { created: T0 + 4, scan_code: 'D-escaped A' },
      { created: T0 + 3, scan_code: 'C-gs1 \u001d01 \\ tab\t' },
      { created: T0 + 2, scan_code: 'B-quote "x"' },
      { created: T0 + 1, scan_code: 'A-plain', device_id: 'M001 é 中 😀', scan_duration: 74 },
    ];
    const items = JSON.parse(`[${await listed()}]`) as Record<string, unknown>[];
    expect(items.map(({ id: _id, ...rest }) => rest)).toEqual(
      expected.map((event) => ({ class: 'event', type: 'scan', gateway_id: 'gw-plain', gateway_usecase: 'picking', gateway_station: 'Station 1', ...event })),
    );
  });

  it('events.insert marks rows the same way, and an event stored before the column (NULL) is listed with the same bytes', async () => {
    const rows: EventRow[] = [
      eventRow({ created: T0 + 100, scan_code: 'H-plain', gateway_id: 'gw-plain', gateway_station: 'Station 1', device_temperature: -3.25 }),
      eventRow({ created: T0 + 101, scan_code: 'I-control', device_firmware: 'v1\n2' }),
      eventRow({ created: T0 + 102, scan_code: 'J-plain', gateway_usecase: 'back\\slash' }),
    ];
    expect(await store.events.insert('acme', rows)).toBe(3);
    expect(await marks()).toMatchObject({ 'H-plain': 1, 'I-control': null, 'J-plain': null });
    const page = (await store.events.newestBefore('acme', T0 + 100, { created: T0 + 1e9, id: '' }, 500, '')).json.toString();
    expect(page).toBe(
      [...rows]
        .reverse()
        .map((row) => JSON.stringify(toApiEvent(row)))
        .join(','),
    );
    const before = await listed();
    await query(`UPDATE events SET plain_text = NULL WHERE customer_id = 'acme'`);
    expect(await marks()).toMatchObject({ 'A-plain': null, 'H-plain': null });
    expect(await listed()).toBe(before);
  });
}

describe('SQLite store: plain_text', () => {
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-plain-text-'));
  // Registered first, so it runs after the store is closed (hooks run in reverse).
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  contract(async () => ({
    store: await openStore(sqliteLocator(dir), 'server'),
    query: async (sql) => runSqliteSql(dir, sql),
  }));
});

describePostgres('PostgreSQL store: plain_text', () => {
  contract(async () => {
    const url = await freshDatabase();
    return {
      store: await openPostgresStore({ kind: 'postgres', url, masterKey: new Uint8Array(32).fill(7) }, 'server'),
      query: (sql) => runSql(url, sql),
    };
  });
});
