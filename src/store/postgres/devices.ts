import type { DeviceRecord } from '../../domain/devices.js';
import type { DeviceFilter, DeviceRepository } from '../ports/index.js';
import type { Database } from './pool.js';

const RECORD_SELECT = 'device_id, first_seen, last_seen, last_gateway_id, battery, firmware, temperature';

/**
 * A page: one range of the primary key from `after` (COLLATE "C": byte order, as SQLite's); the
 * filters are checked on its rows (a customer has thousands of scanners, not millions).
 */
const PAGE_SQL = `SELECT ${RECORD_SELECT} FROM devices
  WHERE customer_id = $1 AND device_id > $2
    AND ($3::text IS NULL OR last_gateway_id = $3)
    AND ($4::bigint IS NULL OR last_seen >= $4) AND ($5::bigint IS NULL OR last_seen < $5)
    AND ($6::float8 IS NULL OR battery < $6)
  ORDER BY device_id LIMIT $7`;

/** The devices' reads; the rows are written with the events (events.ts INSERT_EVENTS_SQL). */
export class PgDevices implements DeviceRepository {
  constructor(private readonly db: Database) {}

  async page(customerId: string, after: string | null, limit: number, filter: DeviceFilter): Promise<DeviceRecord[]> {
    const { rows } = await this.db.query<DeviceRecord>(PAGE_SQL, [
      customerId,
      after ?? '',
      filter.gatewayId ?? null,
      filter.lastSeen?.from ?? null,
      filter.lastSeen?.before ?? null,
      filter.batteryBelow ?? null,
      limit,
    ]);
    return rows;
  }

  async byId(customerId: string, deviceId: string): Promise<DeviceRecord | undefined> {
    return (await this.db.query<DeviceRecord>(`SELECT ${RECORD_SELECT} FROM devices WHERE customer_id = $1 AND device_id = $2`, [customerId, deviceId])).rows[0];
  }
}
