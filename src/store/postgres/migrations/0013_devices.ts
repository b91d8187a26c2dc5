import type { Migration } from './migration.js';

// Scanners, as SQLite's migration 0018 (whose comment says why): one row per device of a customer,
// each reported value with the `created` and id of the event that reported it. Ids are COLLATE "C"
// (byte order, as SQLite's BINARY): the list pages by device_id, and reports are ordered by id.
// The events stored before are grouped once (a hash aggregate), then each value's event is found
// through the (customer_id, created, id) index.
const T = 'text COLLATE "C"';
const REPORTS = [
  ['battery', 'device_battery'],
  ['firmware', 'device_firmware'],
  ['temperature', 'device_temperature'],
] as const;

/** The device's newest event at `at` (with `condition`), the greatest id first. */
const newestAt = (columns: string, at: string, condition = '') =>
  `SELECT ${columns} FROM events AS e WHERE e.customer_id = s.customer_id AND e.created = ${at} AND e.device_id = s.device_id${condition} ORDER BY e.id DESC LIMIT 1`;

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
        last_event ${T} NOT NULL,
        battery double precision,
        battery_at bigint,
        battery_event ${T},
        firmware text,
        firmware_at bigint,
        firmware_event ${T},
        temperature double precision,
        temperature_at bigint,
        temperature_event ${T},
        PRIMARY KEY (customer_id, device_id)
      );

      WITH s AS (
        SELECT customer_id, device_id, min(created) AS first_seen, max(created) AS last_seen,
          ${REPORTS.map(([name, source]) => `max(created) FILTER (WHERE ${source} IS NOT NULL) AS ${name}_at`).join(',\n          ')}
        FROM events WHERE device_id <> '' GROUP BY customer_id, device_id
      )
      INSERT INTO devices
      SELECT s.customer_id, s.device_id, s.first_seen, l.gateway_id, s.last_seen, l.id,
        ${REPORTS.map(([name, source]) => `${name}.${source}, s.${name}_at, ${name}.id`).join(',\n        ')}
      FROM s
      CROSS JOIN LATERAL (${newestAt('e.gateway_id, e.id', 's.last_seen')}) AS l
      ${REPORTS.map(([name, source]) => `LEFT JOIN LATERAL (${newestAt(`e.${source}, e.id`, `s.${name}_at`, ` AND e.${source} IS NOT NULL`)}) AS ${name} ON true`).join('\n      ')};
    `);
  },
};
