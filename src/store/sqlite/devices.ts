import type { Statement } from 'better-sqlite3';
import { DEVICE_ROW_COLUMNS, type DeviceRecord, type DeviceRow } from '../../domain/devices.js';
import type { DeviceFilter, DeviceRepository } from '../ports/index.js';
import { DEVICE_MERGE_SQL, DEVICE_ROW_SELECT } from '../shared/device-merge.js';
import type { Db } from './open.js';

/** One device row written or merged into the stored one (shared/device-merge.ts). */
const UPSERT_SQL = `INSERT INTO devices (${DEVICE_ROW_SELECT}) VALUES (${DEVICE_ROW_COLUMNS.map(() => '?').join(', ')})
  ${DEVICE_MERGE_SQL}`;

const RECORD_SELECT = 'device_id, first_seen, last_seen, last_gateway_id, battery, firmware, temperature';

/** A page: one range of the primary key from `after`; the filters are checked on its rows (a customer has thousands of scanners, not millions). */
const PAGE_SQL = `SELECT ${RECORD_SELECT} FROM devices
  WHERE customer_id = @customerId AND device_id > @after
    AND (@gatewayId IS NULL OR last_gateway_id = @gatewayId)
    AND (@seenFrom IS NULL OR last_seen >= @seenFrom) AND (@seenBefore IS NULL OR last_seen < @seenBefore)
    AND (@batteryBelow IS NULL OR battery < @batteryBelow)
  ORDER BY device_id LIMIT @limit`;

/** Writes devices in the caller's transaction: the event writers (event-rows.ts) call it with what their new events said. */
export class DeviceWriter {
  private readonly upsert: Statement;

  constructor(db: Db) {
    this.upsert = db.prepare(UPSERT_SQL);
  }

  /** One upsert per row (domain/devices.ts DeviceSightings); how many rows. */
  write(rows: readonly DeviceRow[]): number {
    for (const row of rows) this.upsert.run(row);
    return rows.length;
  }
}

/** The devices' reads; the rows are written by DeviceWriter. */
export class SqliteDevices implements DeviceRepository {
  private readonly pageOf: Statement<object, DeviceRecord>;
  private readonly one: Statement<[string, string], DeviceRecord>;

  constructor(db: Db) {
    this.pageOf = db.prepare(PAGE_SQL);
    this.one = db.prepare(`SELECT ${RECORD_SELECT} FROM devices WHERE customer_id = ? AND device_id = ?`);
  }

  async page(customerId: string, after: string | null, limit: number, filter: DeviceFilter): Promise<DeviceRecord[]> {
    return this.pageOf.all({
      customerId,
      after: after ?? '',
      gatewayId: filter.gatewayId ?? null,
      seenFrom: filter.lastSeen?.from ?? null,
      seenBefore: filter.lastSeen?.before ?? null,
      batteryBelow: filter.batteryBelow ?? null,
      limit,
    });
  }

  async byId(customerId: string, deviceId: string): Promise<DeviceRecord | undefined> {
    return this.one.get(customerId, deviceId);
  }
}
