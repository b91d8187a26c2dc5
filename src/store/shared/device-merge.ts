import { LAST_MESSAGE_RESOLUTION_MS } from '../../domain/connectivity.js';
import { DEVICE_REPORTS, DEVICE_ROW_COLUMNS } from '../../domain/devices.js';

/** The column list of a device row (domain/devices.ts DEVICE_ROW_COLUMNS), for INSERT INTO devices. */
export const DEVICE_ROW_SELECT = DEVICE_ROW_COLUMNS.join(', ');

/** domain/devices.ts newerReport in SQL: the new row's report (value at `at`) is newer than the stored one's. */
const newer = (value: string, at: string) =>
  `excluded.${at} IS NOT NULL AND (devices.${at} IS NULL OR excluded.${at} > devices.${at} OR (excluded.${at} = devices.${at}
    AND excluded.${value} IS NOT NULL AND (devices.${value} IS NULL OR excluded.${value} > devices.${value})))`;

/**
 * When a stored row is rewritten at all (docs/devices.md "Kept by ingest"): an earlier first_seen,
 * a newer report whose value differs, or a last_seen at least LAST_MESSAGE_RESOLUTION_MS newer,
 * as for the gateways' last message; otherwise the row stays as it is (no new page, no new row
 * version), and its last_seen lags by less than that.
 */
const CHANGED = `excluded.first_seen < devices.first_seen
  OR excluded.last_seen >= devices.last_seen + ${LAST_MESSAGE_RESOLUTION_MS}
  OR ${DEVICE_REPORTS.map(({ value, at }) => `(excluded.${value} IS DISTINCT FROM devices.${value} AND ${newer(value, at)})`).join('\n  OR ')}`;

/**
 * What a device upsert does with a row already stored, in SQL both dialects run alike (texts
 * compare in byte order: SQLite's BINARY, PostgreSQL's "C"): the earlier first_seen, and each
 * report (value and created) from the new row only where the new row's is newer; nothing unless
 * CHANGED. Every expression reads the stored row as it was before the update (SQL evaluates them
 * all first), so writing a batch's rows in any order, or the same row twice, leaves the same device.
 */
export const DEVICE_MERGE_SQL = `ON CONFLICT (customer_id, device_id) DO UPDATE SET
  first_seen = CASE WHEN excluded.first_seen < devices.first_seen THEN excluded.first_seen ELSE devices.first_seen END,
  ${DEVICE_REPORTS.flatMap(({ value, at }) =>
    [value, at].map((column) => `${column} = CASE WHEN ${newer(value, at)} THEN excluded.${column} ELSE devices.${column} END`),
  ).join(',\n  ')}
  WHERE ${CHANGED}`;
