import type { DeviceRecord } from '../../domain/devices.js';

export type { DeviceRecord };

/** Which devices a page holds; each filter left out matches every device. */
export interface DeviceFilter {
  /** The gateway that relayed the device's newest event. */
  gatewayId?: string;
  /** `from <= last_seen < before` (a status at a time, domain/devices.ts lastSeenRange). */
  lastSeen?: { from?: number; before?: number };
  /** A last reported battery below this; a device that never reported one does not match. */
  batteryBelow?: number;
}

/**
 * Scanners (docs/devices.md), kept by the event writers in the transaction that stores their
 * events (ingest and `events.insert`): here they are only read. Retention leaves them.
 */
export interface DeviceRepository {
  /** Up to `limit` devices of the customer with `device_id > after` (byte order) that match, in device_id order. */
  page(customerId: string, after: string | null, limit: number, filter: DeviceFilter): Promise<DeviceRecord[]>;
  /** One device of the customer, by its exact id. */
  byId(customerId: string, deviceId: string): Promise<DeviceRecord | undefined>;
}
