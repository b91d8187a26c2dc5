// Scanners (docs/devices.md; migrations SQLite 0018 and PostgreSQL 0013), over both stores: ingest
// and events.insert keep one row per device in the transaction of the events, from the new events
// only (one write per device per batch); each value is the newest event's that reported it (of
// events of one millisecond, the greatest value), whatever order they arrive in; pages in byte order with
// filters; the status ranges at their edges; retention leaves devices; the migration fills the
// table from events stored before. Both stores give the same answers (the transcript at the end).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceStatus, lastSeenRange, toApiDevice, DEVICE_STATUSES, type DeviceRecord } from '../../src/domain/devices.js';
import type { IngestMessage } from '../../src/domain/ingest.js';
import type { DeviceFilter, Store } from '../../src/store/ports/index.js';
import { eventRow } from '../helpers/events.js';
import { describePostgres } from '../helpers/postgres.js';
import { ownDatabase, runSql, runSqliteSql, type OwnDatabase } from '../helpers/test-store.js';

const T0 = 1_800_000_000_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The clock of the status checks. */
const NOW = T0 + 30 * DAY;

/** Event ids whose order is that of `n`. */
const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

/** One MQTT message of the gateway: an event object or an array of them. */
const message = (gatewayId: string, body: unknown, receivedAt = T0 + DAY): IngestMessage => ({ gatewayId, receivedAt, payload: Buffer.from(JSON.stringify(body)) });

const device = (fields: Partial<DeviceRecord> & Pick<DeviceRecord, 'device_id' | 'first_seen' | 'last_seen'>): DeviceRecord => ({
  last_gateway_id: null,
  battery: null,
  firmware: null,
  temperature: null,
  ...fields,
});

/** What each store answered, in order, as the API writes it: the two must be the same bytes. */
const transcripts: Record<string, string[]> = {};

function contract(kind: 'sqlite' | 'postgres'): void {
  let database: OwnDatabase;
  let store: Store;
  const transcript: string[] = (transcripts[kind] = []);
  const query = (sql: string) => (kind === 'sqlite' ? Promise.resolve(runSqliteSql(database.dataDir, sql)) : runSql((database.locator as { url: string }).url, sql));

  beforeAll(async () => {
    database = await ownDatabase(kind);
    store = await database.open();
    for (const customer of ['acme', 'other']) {
      await store.customers.createWithAdmin(customer, { id: `admin-${customer}`, customer_id: customer, email: `admin@${customer}.example`, roles: ['ADMIN_ROLE'], created: T0 }, T0);
    }
    await store.gateways.createAll('acme', [{ id: 'gw-a', name: 'A', usecase: 'picking', station: 'S1' }, { id: 'gw-b', name: 'B', usecase: 'picking', station: 'S2' }], T0);
    await store.gateways.createAll('other', [{ id: 'gw-o', name: 'O', usecase: 'picking', station: 'S1' }], T0);
  });
  afterAll(async () => {
    await database?.close();
  });

  /** The customer's device, as the API would show it at NOW (and into the transcript). */
  async function shown(customer: string, deviceId: string) {
    const record = await store.devices.byId(customer, deviceId);
    const answer = record && toApiDevice(record, NOW);
    transcript.push(JSON.stringify(answer ?? null));
    return answer;
  }

  /** The ids of a page (the whole page into the transcript). */
  async function ids(customer: string, after: string | null, limit: number, filter: DeviceFilter = {}): Promise<string[]> {
    const page = await store.devices.page(customer, after, limit, filter);
    transcript.push(JSON.stringify(page.map((record) => toApiDevice(record, NOW))));
    return page.map((record) => record.device_id);
  }

  it('ingest writes one row per device of the batch: first and last seen, the newest event\'s gateway, each value of the newest event that has it', async () => {
    const result = await store.ingest.commit([
      message('gw-a', [
        { type: 'scan', created: T0 + 10, id: id(1), device_id: 'S-1', device_battery: 80, device_firmware: '1.0' },
        // No battery: the telemetry's stays.
        { type: 'scan', created: T0 + 20, id: id(2), device_id: 'S-1' },
      ]),
      message('gw-b', { type: 'telemetry', created: T0 + 15, id: id(3), device_id: 'S-1', device_battery: 75, device_temperature: 31.5 }),
      message('gw-b', { type: 'scan', created: T0 + 5, id: id(4), device_id: 'S-2', device_firmware: '2.0' }),
      message('gw-a', { type: 'scan', created: T0 + 30, id: id(5) }),
      message('gw-a', { type: 'scan', created: T0 + 31, id: id(6), device_id: '' }),
    ]);
    expect([result.events, result.devices]).toEqual([6, 2]);
    expect(await shown('acme', 'S-1')).toEqual({ ...device({ device_id: 'S-1', first_seen: T0 + 10, last_seen: T0 + 20, last_gateway_id: 'gw-a', battery: 75, firmware: '1.0', temperature: 31.5 }), status: 'LOST' });
    expect(await shown('acme', 'S-2')).toEqual({ ...device({ device_id: 'S-2', first_seen: T0 + 5, last_seen: T0 + 5, last_gateway_id: 'gw-b', firmware: '2.0' }), status: 'LOST' });
    expect(await ids('acme', null, 500)).toEqual(['S-1', 'S-2']);
  });

  it('a late older event moves first_seen and nothing else; a newer one without firmware keeps the firmware', async () => {
    const result = await store.ingest.commit([
      message('gw-b', { type: 'scan', created: T0 + 1, id: id(7), device_id: 'S-1', device_battery: 10, device_firmware: '0.9', device_temperature: 20 }),
      message('gw-b', { type: 'telemetry', created: T0 + 40, id: id(8), device_id: 'S-2', device_battery: 50 }),
    ]);
    expect([result.events, result.devices]).toEqual([2, 2]);
    expect(await shown('acme', 'S-1')).toMatchObject(device({ device_id: 'S-1', first_seen: T0 + 1, last_seen: T0 + 20, last_gateway_id: 'gw-a', battery: 75, firmware: '1.0', temperature: 31.5 }));
    expect(await shown('acme', 'S-2')).toMatchObject(device({ device_id: 'S-2', first_seen: T0 + 5, last_seen: T0 + 40, last_gateway_id: 'gw-b', battery: 50, firmware: '2.0' }));
  });

  it('an event stored already counts once: a redelivery, even of an event whose created the service stamped anew, changes no device', async () => {
    const stamped = { type: 'scan', id: id(9), device_id: 'S-3', device_battery: 33 };
    expect((await store.ingest.commit([message('gw-a', stamped, T0 + 100)])).devices).toBe(1);
    const again = await store.ingest.commit([
      message('gw-a', { type: 'scan', created: T0 + 20, id: id(2), device_id: 'S-1' }),
      message('gw-a', { ...stamped, device_battery: 1 }, T0 + 5000),
    ]);
    expect([again.events, again.duplicates, again.devices]).toEqual([0, 2, 0]);
    expect(await shown('acme', 'S-3')).toMatchObject(device({ device_id: 'S-3', first_seen: T0 + 100, last_seen: T0 + 100, last_gateway_id: 'gw-a', battery: 33 }));
  });

  it('of events of one millisecond each value is the greatest (a gateway before none), in one batch or across batches, in either order of arrival', async () => {
    const first = (deviceId: string, n: number) => ({ type: 'scan', created: T0 + 50, id: id(n), device_id: deviceId, device_battery: 1, device_firmware: 'small' });
    const second = (deviceId: string, n: number) => ({ type: 'scan', created: T0 + 50, id: id(n + 1), device_id: deviceId, device_battery: 2, device_firmware: 'great' });
    await store.ingest.commit([message('gw-b', second('S-4', 0x10))]);
    await store.ingest.commit([message('gw-a', first('S-4', 0x10))]);
    await store.ingest.commit([message('gw-a', first('S-5', 0x12)), message('gw-b', second('S-5', 0x12))]);
    const expected = (deviceId: string) => ({ ...device({ device_id: deviceId, first_seen: T0 + 50, last_seen: T0 + 50, last_gateway_id: 'gw-b', battery: 2, firmware: 'small' }), status: 'LOST' });
    expect(await shown('acme', 'S-4')).toEqual(expected('S-4'));
    expect(await shown('acme', 'S-5')).toEqual(expected('S-5'));
    // Texts of one millisecond in UTF-8 byte order: U+1F600 (F0 9F 98 80) after U+FB01 (EF AC 81), which JavaScript's UTF-16 order (D83D < FB01) puts before it.
    await store.events.insert('acme', [
      eventRow({ created: T0 + 55, device_id: 'S-7', device_firmware: '\u{1F600}' }),
      eventRow({ created: T0 + 55, device_id: 'S-7', device_firmware: '\uFB01', gateway_id: 'gw-a' }),
    ]);
    expect(await shown('acme', 'S-7')).toMatchObject({ firmware: '\u{1F600}', last_gateway_id: 'gw-a' });
  });

  it('events.insert keeps devices too; devices are the customer\'s own', async () => {
    expect(
      await store.events.insert('acme', [
        eventRow({ created: T0 + 60, device_id: 'S-6', gateway_id: 'gw-x', device_battery: 5 }),
        eventRow({ created: T0 + 61, type: 'telemetry', device_id: 'S-6', device_temperature: -3.25 }),
        eventRow({ created: T0 + 62, device_id: 'Z-9', gateway_id: 'gw-a', device_battery: 99.5 }),
        eventRow({ created: T0 + 63, device_id: 'é-1', gateway_id: 'gw-b' }),
      ]),
    ).toBe(4);
    await store.ingest.commit([message('gw-o', { type: 'scan', created: T0 + 70, id: id(0x20), device_id: 'S-1', device_battery: 42 })]);
    expect(await shown('acme', 'S-6')).toMatchObject(device({ device_id: 'S-6', first_seen: T0 + 60, last_seen: T0 + 61, battery: 5, temperature: -3.25 }));
    expect(await shown('other', 'S-1')).toMatchObject(device({ device_id: 'S-1', first_seen: T0 + 70, last_seen: T0 + 70, last_gateway_id: 'gw-o', battery: 42 }));
    expect(await shown('acme', 'S-1')).toMatchObject({ battery: 75 });
    expect(await shown('other', 'S-2')).toBeUndefined();
    expect(await shown('acme', 's-1')).toBeUndefined();
  });

  it('pages walk device_id in byte order from the given id; the filters apply to the rows of the range', async () => {
    expect(await ids('acme', null, 3)).toEqual(['S-1', 'S-2', 'S-3']);
    expect(await ids('acme', 'S-3', 3)).toEqual(['S-4', 'S-5', 'S-6']);
    expect(await ids('acme', 'S-6', 3)).toEqual(['S-7', 'Z-9', 'é-1']);
    expect(await ids('acme', 'é-1', 3)).toEqual([]);
    expect(await ids('acme', null, 500, { gatewayId: 'gw-b' })).toEqual(['S-2', 'S-4', 'S-5', 'é-1']);
    expect(await ids('acme', null, 500, { batteryBelow: 50 })).toEqual(['S-3', 'S-4', 'S-5', 'S-6']);
    expect(await ids('acme', null, 500, { batteryBelow: 99.5 })).toEqual(['S-1', 'S-2', 'S-3', 'S-4', 'S-5', 'S-6']);
    expect(await ids('acme', 'S-4', 1, { gatewayId: 'gw-b', batteryBelow: 50 })).toEqual(['S-5']);
    expect(await ids('acme', null, 500, { lastSeen: { from: T0 + 40, before: T0 + 62 } })).toEqual(['S-2', 'S-4', 'S-5', 'S-6', 'S-7']);
  });

  it('the status of a device and the last_seen range of each status agree at the edges: 2 hours is ACTIVE, 7 days LOST, a time ahead ACTIVE', async () => {
    const edges = { 'a-2h': NOW - 2 * HOUR, 'b-2h+1': NOW - 2 * HOUR - 1, 'c-7d-1': NOW - 7 * DAY + 1, 'd-7d': NOW - 7 * DAY, 'e-ahead': NOW + 1000 };
    await store.events.insert('clock', Object.values(edges).map((created, i) => eventRow({ created, device_id: Object.keys(edges)[i]! })));
    const expected = { ACTIVE: ['a-2h', 'e-ahead'], INACTIVE: ['b-2h+1', 'c-7d-1'], LOST: ['d-7d'] };
    for (const status of DEVICE_STATUSES) {
      expect(await ids('clock', null, 500, { lastSeen: lastSeenRange(status, NOW) })).toEqual(expected[status]);
      for (const deviceId of expected[status]) expect(deviceStatus(edges[deviceId as keyof typeof edges], NOW)).toBe(status);
    }
  });

  it('the migration fills the table from the events stored before it, as ingest wrote it', async () => {
    const rows = () => query('SELECT * FROM devices ORDER BY customer_id, device_id');
    const written = await rows();
    expect(written).toHaveLength(15);
    await store.close();
    const migration = kind === 'sqlite' ? '0018_devices' : '0013_devices';
    await query('DROP TABLE devices');
    await query(`DELETE FROM schema_migrations WHERE name = '${migration}'`);
    store = await database.open();
    expect(await rows()).toEqual(written);
  });

  it('retention deletes events and leaves their devices', async () => {
    const before = await ids('clock', null, 500);
    expect((await store.retention.deleteEventsBefore('clock', NOW, 1000)).deleted).toBe(4);
    expect(await ids('clock', null, 500)).toEqual(before);
    expect(await shown('clock', 'd-7d')).toEqual({ ...device({ device_id: 'd-7d', first_seen: NOW - 7 * DAY, last_seen: NOW - 7 * DAY }), status: 'LOST' });
  });

  // After the migration test, which compares the migration's exact rows with those ingest wrote.
  describe('last_seen to 8 s (LAST_MESSAGE_RESOLUTION_MS): a row is rewritten only for a changed value or a last_seen 8 s newer', () => {
    const written = async (deviceId: string, n: number, created: number, deviceBattery: number) =>
      (await store.ingest.commit([message('gw-o', { type: 'scan', created, id: id(n), device_id: deviceId, device_battery: deviceBattery })])).devices;
    const seen = (deviceId: string, lastSeen: number, battery: number) =>
      ({ ...device({ device_id: deviceId, first_seen: T0 + 1000, last_seen: lastSeen, last_gateway_id: 'gw-o', battery }), status: 'LOST' });

    it('a second batch within 8 s with the same values writes nothing: last_seen stays', async () => {
      expect(await written('R-1', 0x30, T0 + 1000, 60)).toBe(1);
      expect(await written('R-1', 0x31, T0 + 5000, 60)).toBe(0);
      expect(await written('R-1', 0x32, T0 + 8_999, 60)).toBe(0);
      expect(await shown('other', 'R-1')).toEqual(seen('R-1', T0 + 1000, 60));
    });

    it('one 8 s after the stored last_seen is written', async () => {
      expect(await written('R-2', 0x40, T0 + 1000, 60)).toBe(1);
      expect(await written('R-2', 0x41, T0 + 8_999, 60)).toBe(0);
      expect(await written('R-2', 0x42, T0 + 9_000, 60)).toBe(1);
      expect(await shown('other', 'R-2')).toEqual(seen('R-2', T0 + 9_000, 60));
    });

    it('a changed battery within 8 s is written at once, with its last_seen', async () => {
      expect(await written('R-3', 0x50, T0 + 1000, 60)).toBe(1);
      expect(await written('R-3', 0x51, T0 + 3000, 60)).toBe(0);
      expect(await written('R-3', 0x52, T0 + 4000, 59)).toBe(1);
      expect(await shown('other', 'R-3')).toEqual(seen('R-3', T0 + 4000, 59));
    });

    it('after a restart (nothing in memory) the stored row decides the same', async () => {
      await store.close();
      store = await database.open();
      expect(await written('R-1', 0x60, T0 + 8500, 60)).toBe(0);
      expect(await written('R-1', 0x61, T0 + 8900, 60)).toBe(0);
      expect(await written('R-1', 0x62, T0 + 8950, 61)).toBe(1);
      expect(await shown('other', 'R-1')).toEqual(seen('R-1', T0 + 8950, 61));
    });
  });
}

describe('SQLite store: devices', () => contract('sqlite'));

describePostgres('PostgreSQL store: devices', () => {
  contract('postgres');
  it('answered every read with the same bytes as the SQLite store', () => {
    expect(transcripts.postgres!.length).toBeGreaterThan(25);
    expect(transcripts.postgres).toEqual(transcripts.sqlite);
  });
});
