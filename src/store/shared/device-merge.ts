import { DEVICE_REPORTS, DEVICE_ROW_COLUMNS } from '../../domain/devices.js';

/** The column list of a device row (domain/devices.ts DEVICE_ROW_COLUMNS), for INSERT INTO devices. */
export const DEVICE_ROW_SELECT = DEVICE_ROW_COLUMNS.join(', ');

/** Whether the new row's report is newer than the stored one's: it has one, and its (created, id) is greater. */
const newer = (at: string, event: string) =>
  `excluded.${at} IS NOT NULL AND (devices.${at} IS NULL OR (excluded.${at}, excluded.${event}) > (devices.${at}, devices.${event}))`;

/**
 * What a device upsert does with a row already stored, in SQL both dialects run alike (row value
 * comparison; text in byte order, SQLite's BINARY and PostgreSQL's "C"): the earlier first_seen,
 * and each report (value, created, event id) from the new row only where the new row's is newer.
 * Every expression reads the stored row as it was before the update (SQL evaluates them all first),
 * so writing a batch's rows in any order, or the same row twice, leaves the same device.
 */
export const DEVICE_MERGE_SQL = `ON CONFLICT (customer_id, device_id) DO UPDATE SET
  first_seen = CASE WHEN excluded.first_seen < devices.first_seen THEN excluded.first_seen ELSE devices.first_seen END,
  ${DEVICE_REPORTS.flatMap(({ value, at, event }) =>
    [value, at, event].map((column) => `${column} = CASE WHEN ${newer(at, event)} THEN excluded.${column} ELSE devices.${column} END`),
  ).join(',\n  ')}`;
