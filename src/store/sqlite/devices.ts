import type { Statement } from 'better-sqlite3';
import { DEVICE_ROW_COLUMNS, deviceRowDue, type DeviceRecord, type DeviceRow } from '../../domain/devices.js';
import type { DeviceFilter, DeviceRepository } from '../ports/index.js';
import { DEVICE_MERGE_SQL, DEVICE_ROW_SELECT } from '../shared/device-merge.js';
import type { Db } from './open.js';

/** One device row written or merged into the stored one (shared/device-merge.ts); the row as stored after, when written. */
const UPSERT_SQL = `INSERT INTO devices (${DEVICE_ROW_SELECT}) VALUES (${DEVICE_ROW_COLUMNS.map(() => '?').join(', ')})
  ${DEVICE_MERGE_SQL}
  RETURNING ${DEVICE_ROW_SELECT}`;

/** How many stored rows a connection keeps in memory (DeviceCache): more scanners than a deployment has. */
export const DEVICE_CACHE_ROWS = 100_000;

/**
 * The device rows as stored, as a connection last wrote or read them, the least recently used
 * dropped past DEVICE_CACHE_ROWS: with them DeviceWriter decides without a statement that a row
 * need not be written (domain/devices.ts deviceRowDue). Right while this connection is the only
 * writer of devices (in `serve`, the ingest writer thread; docs/devices.md), and only with what
 * was committed: whoever runs a transaction that writes devices clears it when that fails.
 */
export class DeviceCache {
  private readonly rows = new Map<string, DeviceRow>();

  constructor(private readonly limit = DEVICE_CACHE_ROWS) {}

  get(key: string): DeviceRow | undefined {
    const row = this.rows.get(key);
    if (row) {
      this.rows.delete(key);
      this.rows.set(key, row);
    }
    return row;
  }

  set(key: string, row: DeviceRow): void {
    this.rows.delete(key);
    this.rows.set(key, row);
    if (this.rows.size > this.limit) this.rows.delete(this.rows.keys().next().value!);
  }

  clear(): void {
    this.rows.clear();
  }
}

const caches = new WeakMap<Db, DeviceCache>();

/** The connection's DeviceCache, one for all its writers. */
export function deviceCacheOf(db: Db): DeviceCache {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new DeviceCache()));
  return cache;
}

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
  private readonly upsert: Statement<DeviceRow, DeviceRow>;
  private readonly stored: Statement<[string, string], DeviceRow>;
  private readonly cache: DeviceCache;

  constructor(db: Db) {
    this.upsert = db.prepare<DeviceRow, DeviceRow>(UPSERT_SQL).raw();
    this.stored = db.prepare<[string, string], DeviceRow>(`SELECT ${DEVICE_ROW_SELECT} FROM devices WHERE customer_id = ? AND device_id = ?`).raw();
    this.cache = deviceCacheOf(db);
  }

  /**
   * One upsert per row (domain/devices.ts DeviceSightings) that may change the stored one, none
   * for a row the cache shows need not be written; how many rows were written.
   */
  write(rows: readonly DeviceRow[]): number {
    let written = 0;
    for (const row of rows) {
      const key = `${row[0]}\u0000${row[1]}`;
      const cached = this.cache.get(key);
      if (cached && !deviceRowDue(cached, row)) continue;
      const stored = this.upsert.get(...row);
      if (stored) written++;
      const now = stored ?? this.stored.get(row[0] as string, row[1] as string);
      if (now) this.cache.set(key, now);
    }
    return written;
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
