import type { Migration } from './migration.js';

// Scanners, as SQLite's migration 0018 (whose comment says why): one row per device of a customer,
// each reported value with the `created` of the event that reported it. Texts are COLLATE "C"
// (byte order, as SQLite's BINARY): the list pages by device_id, and of events of one millisecond
// the greatest value is kept. The events stored before are grouped once (a hash aggregate), then
// each value is read through the (customer_id, created, id) index.
const T = 'text COLLATE "C"';
const REPORTS = [
  ['battery', 'device_battery'],
  ['firmware', 'device_firmware'],
  ['temperature', 'device_temperature'],
] as const;

/** The device's `column` at `at` (only where `column` is not null, unless `always`), the greatest first. */
const newestAt = (column: string, at: string, always = false) =>
  `(SELECT ${column} FROM events AS e WHERE e.customer_id = s.customer_id AND e.created = ${at} AND e.device_id = s.device_id${always ? '' : ` AND ${column} IS NOT NULL`}
    ORDER BY ${column}${column === 'device_firmware' ? ' COLLATE "C"' : ''} DESC NULLS LAST LIMIT 1)`;

export const migration: Migration = {
  name: '0013_devices',
  async up(client) {
    await client.query(`
      CREATE TABLE devices (
        customer_id ${T} NOT NULL,
        device_id ${T} NOT NULL,
        first_seen bigint NOT NULL,
        last_gateway_id ${T},
        last_seen bigint NOT NULL,
        battery double precision,
        battery_at bigint,
        firmware ${T},
        firmware_at bigint,
        temperature double precision,
        temperature_at bigint,
        PRIMARY KEY (customer_id, device_id)
      );

      WITH s AS (
        SELECT customer_id, device_id, min(created) AS first_seen, max(created) AS last_seen,
          ${REPORTS.map(([name, source]) => `max(created) FILTER (WHERE ${source} IS NOT NULL) AS ${name}_at`).join(',\n          ')}
        FROM events WHERE device_id <> '' GROUP BY customer_id, device_id
      )
      INSERT INTO devices
      SELECT customer_id, device_id, first_seen, ${newestAt('gateway_id', 's.last_seen', true)}, last_seen,
        ${REPORTS.map(([name, source]) => `${newestAt(source, `s.${name}_at`)}, ${name}_at`).join(',\n        ')}
      FROM s;
    `);
  },
};
