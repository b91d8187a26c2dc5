import { useEffect, useState } from 'preact/hooks';
import { Button } from '../../components/button';
import { ErrorMessage } from '../../components/error-message';
import { PageHeading } from '../../components/page-heading';
import { useGatewayNames } from '../../lib/gateway-names';
import { KeysetPager } from './keyset-pager';
import { ScannerFilters, type ScannerFilter } from './scanner-filters';
import { ScannerTable } from './scanner-table';
import { SCANNER_PAGE_SIZE, useDevicePages } from './use-device-pages';

const NO_FILTER: ScannerFilter = { gatewayId: '', status: '', lowBattery: false };

/** The Scanners page: the scanners known from the events their gateways relay (docs/devices.md), filtered and paged. */
export function ScannersPage() {
  const names = useGatewayNames();
  const [filter, setFilter] = useState(NO_FILTER);
  const list = useDevicePages(filter);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    // "5 min ago" moves on while the page stays open.
    const timer = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(timer);
  }, []);
  const filtered = Boolean(filter.gatewayId || filter.status || filter.lowBattery);
  return (
    <>
      <PageHeading title="Scanners">
        <Button
          onClick={() => {
            setNow(Date.now());
            list.refresh();
            names.reload();
          }}
        >
          Refresh
        </Button>
      </PageHeading>
      <ScannerFilters filter={filter} onFilter={setFilter} gateways={names.gateways ?? []} />
      <ErrorMessage error={list.error ?? names.error} />
      {list.devices === undefined && !list.error ? (
        <p class="loading">Loading scanners…</p>
      ) : (
        list.devices && (
          <>
            <ScannerTable
              devices={list.devices}
              now={now}
              nameOf={names.nameOf}
              empty={filtered ? 'No scanner matches the filters.' : 'No scanners yet: they appear with the first event their gateway relays.'}
            />
            {(list.page > 0 || list.hasNext) && (
              <KeysetPager page={list.page} pageSize={SCANNER_PAGE_SIZE} rows={list.devices.length} hasNext={list.hasNext} noun="Scanners" onPrevious={list.previous} onNext={list.next} />
            )}
          </>
        )
      )}
    </>
  );
}
