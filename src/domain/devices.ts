import { ACTIVE_WINDOW_MS, LAST_MESSAGE_RESOLUTION_MS } from './connectivity.js';
import { COLUMN } from './payload.js';

/**
 * Scanners (devices), known from the events their gateways relay (docs/devices.md). A device's
 * record is kept in the transaction that stores its events, from the events that were new: each
 * value is that of the newest event that reported it (newerReport), so that an event arriving
 * late, or again, never overwrites what a newer one said.
 */

export const DEVICE_STATUSES = ['ACTIVE', 'INACTIVE', 'LOST'] as const;
export type DeviceStatus = (typeof DEVICE_STATUSES)[number];

/** A device with no event for this long is LOST (ACTIVE is the gateways' two hours, connectivity.ts). */
export const LOST_AFTER_MS = 7 * 24 * 60 * 60 * 1000;

/** A device as stored, without its customer. Values never reported are null. */
export interface DeviceRecord {
  device_id: string;
  first_seen: number;
  last_seen: number;
  last_gateway_id: string | null;
  battery: number | null;
  firmware: string | null;
  temperature: number | null;
}

/** A device as the API shows it: the record and its status at the time of the read. */
export interface ApiDevice extends DeviceRecord {
  status: DeviceStatus;
}

/**
 * The status at `now`: ACTIVE while the newest event is at most two hours old (one ahead of `now`,
 * clock skew, too), LOST once it is seven days old or more, INACTIVE between.
 */
export function deviceStatus(lastSeen: number, now: number): DeviceStatus {
  const age = now - lastSeen;
  if (age <= ACTIVE_WINDOW_MS) return 'ACTIVE';
  return age >= LOST_AFTER_MS ? 'LOST' : 'INACTIVE';
}

/** The `last_seen` of the devices of a status at `now`, as deviceStatus says: `from <= last_seen < before`. */
export function lastSeenRange(status: DeviceStatus, now: number): { from?: number; before?: number } {
  if (status === 'ACTIVE') return { from: now - ACTIVE_WINDOW_MS };
  if (status === 'LOST') return { before: now - LOST_AFTER_MS + 1 };
  return { from: now - LOST_AFTER_MS + 1, before: now - ACTIVE_WINDOW_MS };
}

/** The API form, its fields in a fixed order (both stores' answers are the same bytes). */
export function toApiDevice(record: DeviceRecord, now: number): ApiDevice {
  return {
    device_id: record.device_id,
    first_seen: record.first_seen,
    last_seen: record.last_seen,
    last_gateway_id: record.last_gateway_id,
    battery: record.battery,
    firmware: record.firmware,
    temperature: record.temperature,
    status: deviceStatus(record.last_seen, now),
  };
}

/**
 * The stored row of a device, in column order. Each reported value is kept with the `created` of
 * the event that reported it (`at`; the last gateway's is `last_seen`). A row of the devices
 * table is also what DeviceSightings gathers from a batch.
 */
export const DEVICE_ROW_COLUMNS = [
  'customer_id',
  'device_id',
  'first_seen',
  'last_gateway_id',
  'last_seen',
  'battery',
  'battery_at',
  'firmware',
  'firmware_at',
  'temperature',
  'temperature_at',
] as const;

/**
 * The reported values of a row: its columns, and the event column each comes from. The last
 * gateway counts whatever it is (`always`, null too); the others only where the event carries
 * them, so that an event without a battery does not erase the last one known.
 */
export const DEVICE_REPORTS = [
  { value: 'last_gateway_id', at: 'last_seen', source: 'gateway_id', always: true },
  { value: 'battery', at: 'battery_at', source: 'device_battery', always: false },
  { value: 'firmware', at: 'firmware_at', source: 'device_firmware', always: false },
  { value: 'temperature', at: 'temperature_at', source: 'device_temperature', always: false },
] as const;

export type DeviceRow = (string | number | null)[];
type Value = string | number | null;

/**
 * Whether a report (`value` at `created`) is newer than the kept one (`kept` at `at`): a later
 * `created`, or, of events of one millisecond, the greater value (null the least; numbers by
 * value, texts in UTF-8 byte order, as the databases compare them). Events of one millisecond
 * have no order of their own (ids are random), and this one makes the result independent of the
 * order in which they arrive, in one batch or several.
 */
export function newerReport(created: number, value: Value, at: number | null, kept: Value): boolean {
  if (at === null || created > at) return true;
  if (created < at || value === null) return false;
  if (kept === null) return true;
  if (typeof value === 'number') return value > (kept as number);
  return Buffer.compare(Buffer.from(value), Buffer.from(kept as string)) > 0;
}

const FIRST_SEEN = DEVICE_ROW_COLUMNS.indexOf('first_seen');
const LAST_SEEN = DEVICE_ROW_COLUMNS.indexOf('last_seen');
/** Where each report's (value, at) begins in a row, and the slot of EventValues it comes from. */
const REPORT_SLOTS = DEVICE_REPORTS.map((report) => ({
  offset: DEVICE_ROW_COLUMNS.indexOf(report.value),
  slot: COLUMN[report.source],
  always: report.always,
}));

/**
 * Whether a batch's row of a device must be written over the stored one (docs/devices.md "Kept
 * by ingest"): an earlier first_seen, a newer report whose value differs, or a last_seen
 * LAST_MESSAGE_RESOLUTION_MS newer. shared/device-merge.ts says the same in SQL.
 */
export function deviceRowDue(stored: DeviceRow, row: DeviceRow): boolean {
  if ((row[FIRST_SEEN] as number) < (stored[FIRST_SEEN] as number)) return true;
  if ((row[LAST_SEEN] as number) >= (stored[LAST_SEEN] as number) + LAST_MESSAGE_RESOLUTION_MS) return true;
  return REPORT_SLOTS.some(({ offset }) => {
    const at = row[offset + 1] as number | null;
    return at !== null && row[offset] !== stored[offset] && newerReport(at, row[offset]!, stored[offset + 1] as number | null, stored[offset]!);
  });
}

/** What a batch of new events says of each device, one row per device: a store then writes one upsert per device, not per event. */
export class DeviceSightings {
  private readonly customers = new Map<string, Map<string, DeviceRow>>();
  /** The devices of the customer of the event before (a batch has one customer, or few). */
  private last: { customerId: string; devices: Map<string, DeviceRow> } | undefined;

  /** Adds one stored event (values in STORED_EVENT_COLUMNS order); one without a device id is no device's. */
  add(values: readonly unknown[]): void {
    const deviceId = values[COLUMN.device_id];
    if (typeof deviceId !== 'string' || deviceId === '') return;
    const created = values[COLUMN.created] as number;
    const devices = this.devicesOf(values[COLUMN.customer_id] as string);
    let row = devices.get(deviceId);
    if (!row) {
      row = new Array<Value>(DEVICE_ROW_COLUMNS.length).fill(null);
      row[0] = values[COLUMN.customer_id] as string;
      row[1] = deviceId;
      row[FIRST_SEEN] = created;
      devices.set(deviceId, row);
    } else if (created < (row[FIRST_SEEN] as number)) {
      row[FIRST_SEEN] = created;
    }
    for (const { offset, slot, always } of REPORT_SLOTS) {
      const value = (values[slot] ?? null) as Value;
      if (value === null && !always) continue;
      if (newerReport(created, value, row[offset + 1] as number | null, row[offset]!)) {
        row[offset] = value;
        row[offset + 1] = created;
      }
    }
  }

  /** The rows, one per device seen. */
  rows(): DeviceRow[] {
    const rows: DeviceRow[] = [];
    for (const devices of this.customers.values()) rows.push(...devices.values());
    return rows;
  }

  private devicesOf(customerId: string): Map<string, DeviceRow> {
    if (this.last?.customerId === customerId) return this.last.devices;
    let devices = this.customers.get(customerId);
    if (!devices) this.customers.set(customerId, (devices = new Map()));
    this.last = { customerId, devices };
    return devices;
  }
}
