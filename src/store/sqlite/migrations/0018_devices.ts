import type { Migration } from './migration.js';

// Scanners (docs/devices.md): one row per device of a customer, kept by whatever stores events in
// the same transaction (event-rows.ts). Each reported value is kept with the `created` of the
// event that reported it (`_at`; the last gateway's is last_seen), so that an event stored late
// never overwrites what a newer one said. WITHOUT ROWID: the list walks the primary key, and a row
// is found and rewritten by it once per batch.
//
// The events stored before are read once: one pass groups them by device (the newest time of each
// value), then each value is read through the (customer_id, created, id) index: of events of that
// millisecond the greatest value, a gateway before none, as domain/devices.ts newerReport orders them.
const REPORTS = [
  ['battery', 'device_battery'],
  ['firmware', 'device_firmware'],
  ['temperature', 'device_temperature'],
] as const;

/** The device's `column` at `at` (only where `column` is not null, unless `always`), the greatest first. */
const newestAt = (column: string, at: string, always = false) =>
  `(SELECT ${column} FROM events WHERE customer_id = s.customer_id AND created = ${at} AND device_id = s.device_id${always ? '' : ` AND ${column} IS NOT NULL`}
    ORDER BY ${column} DESC LIMIT 1)`;

export const migration: Migration = {
  name: '0018_devices',
  up(db) {
    db.exec(`
      CREATE TABLE devices (
        customer_id TEXT NOT NULL,
        device_id TEXT NOT NULL,
        first_seen INTEGER NOT NULL,
        last_gateway_id TEXT,
        last_seen INTEGER NOT NULL,
        battery REAL,
        battery_at INTEGER,
        firmware TEXT,
        firmware_at INTEGER,
        temperature REAL,
        temperature_at INTEGER,
        PRIMARY KEY (customer_id, device_id)
      ) STRICT, WITHOUT ROWID;

      WITH s AS (
        SELECT customer_id, device_id, min(created) AS first_seen, max(created) AS last_seen,
          ${REPORTS.map(([name, source]) => `max(CASE WHEN ${source} IS NOT NULL THEN created END) AS ${name}_at`).join(',\n          ')}
        FROM events WHERE device_id <> '' GROUP BY customer_id, device_id
      )
      INSERT INTO devices
      SELECT customer_id, device_id, first_seen, ${newestAt('gateway_id', 's.last_seen', true)}, last_seen,
        ${REPORTS.map(([name, source]) => `${newestAt(source, `s.${name}_at`)}, ${name}_at`).join(',\n        ')}
      FROM s;
    `);
  },
};
