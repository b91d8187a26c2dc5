import { useCallback, useEffect, useState } from 'preact/hooks';
import type { Device, DevicePage } from '../../../src/client/devices';
import { api, customerPath } from '../../lib/api';
import { LOW_BATTERY } from './device-badges';
import type { ScannerFilter } from './scanner-filters';

/** Scanners on one page: a screenful to scan, and the one request a page costs stays small. */
export const SCANNER_PAGE_SIZE = 50;

export interface DevicePages {
  devices: Device[] | undefined;
  /** Zero-based number of the page shown. */
  page: number;
  hasNext: boolean;
  error: unknown;
  next: () => void;
  previous: () => void;
  /** Reads the page shown again (statuses and batteries change). */
  refresh: () => void;
}

/** The first page's path for the filter: the API checks the values and names a wrong one. */
function firstPage(filter: ScannerFilter): string {
  const query = new URLSearchParams({ limit: String(SCANNER_PAGE_SIZE) });
  if (filter.gatewayId) query.set('gateway_id', filter.gatewayId);
  if (filter.status) query.set('status', filter.status);
  if (filter.lowBattery) query.set('battery_below', String(LOW_BATTERY));
  return `${customerPath('/devices')}?${query}`;
}

/**
 * The device list a page at a time, by the API's keyset (`links.next`, docs/devices.md "The
 * list"). Only the paths of the pages passed are kept, to go back: one page of rows in memory.
 */
export function useDevicePages(filter: ScannerFilter): DevicePages {
  // The path of every page up to the one shown; the last is shown.
  const [trail, setTrail] = useState<string[]>(() => [firstPage(filter)]);
  const [shown, setShown] = useState<DevicePage>();
  const [error, setError] = useState<unknown>();
  const [reads, setReads] = useState(0);
  useEffect(() => {
    setTrail([firstPage(filter)]);
  }, [filter]);
  const path = trail[trail.length - 1]!;
  useEffect(() => {
    const controller = new AbortController();
    api.get<DevicePage>(path, { signal: controller.signal }).then(
      (page) => {
        setShown(page);
        setError(undefined);
      },
      (failure: unknown) => {
        if ((failure as Error).name === 'AbortError') return;
        setShown(undefined);
        setError(failure);
      },
    );
    return () => controller.abort();
  }, [path, reads]);
  const next = useCallback(() => {
    if (shown?.links.next) setTrail((pages) => [...pages, shown.links.next!]);
  }, [shown]);
  const previous = useCallback(() => setTrail((pages) => (pages.length > 1 ? pages.slice(0, -1) : pages)), []);
  const refresh = useCallback(() => setReads((n) => n + 1), []);
  return { devices: shown?.items, page: trail.length - 1, hasNext: Boolean(shown?.links.next), error, next, previous, refresh };
}
