import { useId } from 'preact/hooks';
import type { DeviceStatus } from '../../../src/client/devices';
import type { Gateway } from '../../../src/client/gateways';
import { LOW_BATTERY } from './device-badges';

/** What the list is narrowed to (docs/devices.md "The list"): each left empty matches every scanner. */
export interface ScannerFilter {
  gatewayId: string;
  status: DeviceStatus | '';
  lowBattery: boolean;
}

interface Props {
  filter: ScannerFilter;
  onFilter: (filter: ScannerFilter) => void;
  /** The gateways to choose from (by name); none when the user may not read gateways. */
  gateways: readonly Gateway[];
}

/** The filters of the Scanners page: the gateway that relayed a scanner's newest event, its status, a low battery. */
export function ScannerFilters({ filter, onFilter, gateways }: Props) {
  const id = useId();
  return (
    <div class="scanner-filters">
      {gateways.length > 0 && (
        <div class="field">
          <label for={`${id}-gateway`}>Gateway</label>
          <select id={`${id}-gateway`} value={filter.gatewayId} onChange={(event) => onFilter({ ...filter, gatewayId: event.currentTarget.value })}>
            <option value="">All gateways</option>
            {gateways.map((g) => (
              <option key={g.id} value={g.id}>
                {g.name}
              </option>
            ))}
          </select>
        </div>
      )}
      <div class="field">
        <label for={`${id}-status`}>Status</label>
        <select id={`${id}-status`} value={filter.status} onChange={(event) => onFilter({ ...filter, status: event.currentTarget.value as ScannerFilter['status'] })}>
          <option value="">Any status</option>
          <option value="ACTIVE">Active (an event within 2 hours)</option>
          <option value="INACTIVE">Inactive</option>
          <option value="LOST">Lost (no event for 7 days)</option>
        </select>
      </div>
      <label class="check">
        <input type="checkbox" checked={filter.lowBattery} onChange={(event) => onFilter({ ...filter, lowBattery: event.currentTarget.checked })} />
        {`Low battery (below ${LOW_BATTERY} %)`}
      </label>
    </div>
  );
}
