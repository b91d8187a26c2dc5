import { useMemo } from 'preact/hooks';
import type { Device } from '../../../src/client/devices';
import { customerPath } from '../../lib/api';
import { useKeysetPages, type KeysetPages } from '../../lib/use-keyset-pages';
import { LOW_BATTERY } from './device-badges';
import type { ScannerFilter } from './scanner-filters';

/** Scanners on one page: a screenful to scan, and the one request a page costs stays small. */
export const SCANNER_PAGE_SIZE = 50;

/** The pages of the device list (KeysetPages) and the rows of the one shown. */
export interface DevicePages extends KeysetPages<Device> {
  devices: Device[] | undefined;
}

/** The first page's path for the filter: the API checks the values and names a wrong one. */
function firstPage(filter: ScannerFilter): string {
  const query = new URLSearchParams({ limit: String(SCANNER_PAGE_SIZE) });
  if (filter.gatewayId) query.set('gateway_id', filter.gatewayId);
  if (filter.status) query.set('status', filter.status);
  if (filter.lowBattery) query.set('battery_below', String(LOW_BATTERY));
  return `${customerPath('/devices')}?${query}`;
}

/** The device list a page at a time, by the API's keyset (docs/devices.md "The list"). */
export function useDevicePages(filter: ScannerFilter): DevicePages {
  const pages = useKeysetPages<Device>(useMemo(() => firstPage(filter), [filter]));
  // A failed read shows its error, not the rows of another filter.
  return { ...pages, devices: pages.error ? undefined : pages.shown?.items };
}
