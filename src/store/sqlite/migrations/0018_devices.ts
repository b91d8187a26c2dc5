import type { Migration } from './migration.js';

// Scanners (docs/devices.md): one row per device of a customer, kept by whatever stores events in
// the same transaction (event-rows.ts). Each reported value is kept with the `created` and id of
// the event that reported it (`_at`, `_event`; the last gateway with last_seen and last_event), so
// that an event stored late never overwrites what a newer one said. WITHOUT ROWID: the list walks
// the primary key, and a row is found and rewritten by it once per batch.
//
// The events stored before are read once: one pass groups them by device (the newest time of each
// value), then each value's event is found through the (customer_id, created, id) index, the
// greatest id among events of that millisecond, as ingest orders them.
const REPORTS = [
  ['battery', 'device_battery'],
  ['firmware', 'device_firmware'],
  ['temperature', 'device_temperature'],
] as const;

/** The seq of the device's newest event at `at` (with `condition`), the greatest id first. */
const newestAt = (at: string, condition = '') =>
  `(SELECT seq FROM events WHERE customer_id = s.customer_id AND created = ${at} AND device_id = s.device_id${condition} ORDER BY id DESC LIMIT 1)`;

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
        last_event TEXT NOT NULL,
        battery REAL,
        battery_at INTEGER,
        battery_event TEXT,
        firmware TEXT,
        firmware_at INTEGER,
        firmware_event TEXT,
        temperature REAL,
        temperature_at INTEGER,
        temperature_event TEXT,
        PRIMARY KEY (customer_id, device_id)
      ) STRICT, WITHOUT ROWID;

      WITH s AS (
        SELECT customer_id, device_id, min(created) AS first_seen, max(created) AS last_seen,
          ${REPORTS.map(([name, source]) => `max(CASE WHEN ${source} IS NOT NULL THEN created END) AS ${name}_at`).join(',\n          ')}
        FROM events WHERE device_id <> '' GROUP BY customer_id, device_id
      )
      INSERT INTO devices
      SELECT s.customer_id, s.device_id, s.first_seen, l.gateway_id, s.last_seen, l.id,
        ${REPORTS.map(([name, source]) => `${name}.${source}, s.${name}_at, ${name}.id`).join(',\n        ')}
      FROM s
      JOIN events AS l ON l.seq = ${newestAt('s.last_seen')}
      ${REPORTS.map(([name, source]) => `LEFT JOIN events AS ${name} ON ${name}.seq = ${newestAt(`s.${name}_at`, ` AND ${source} IS NOT NULL`)}`).join('\n      ')};
    `);
  },
};
