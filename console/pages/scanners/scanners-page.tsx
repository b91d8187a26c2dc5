import { useEffect, useState } from 'preact/hooks';
import type { Device } from '../../../src/client/devices';
import { Button } from '../../components/button';
import { ErrorMessage } from '../../components/error-message';
import { PageHeading } from '../../components/page-heading';
import { StatusMessage } from '../../components/status-message';
import { useGatewayNames } from '../../lib/gateway-names';
import { can } from '../../lib/session';
import { sentSentence } from '../gateways/commands/command-input';
import { useFollowedCommands } from '../gateways/commands/use-followed-commands';
import { ScannerCommandDialog } from './scanner-command-dialog';
import { KeysetPager } from '../../components/keyset-pager';
import { ScannerFilters, type ScannerFilter } from './scanner-filters';
import { ScannerTable } from './scanner-table';
import { SCANNER_PAGE_SIZE, useDevicePages } from './use-device-pages';

const NO_FILTER: ScannerFilter = { gatewayId: '', status: '', lowBattery: false };

/** The Scanners page: the scanners known from the events their gateways relay (docs/devices.md), filtered and paged. */
export function ScannersPage() {
  const names = useGatewayNames();
  const [filter, setFilter] = useState(NO_FILTER);
  const list = useDevicePages(filter);
  const commands = useFollowedCommands();
  const [commandTo, setCommandTo] = useState<Device & { last_gateway_id: string }>();
  const [status, setStatus] = useState<string>();
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
      <StatusMessage text={status} />
      <ErrorMessage error={list.error ?? names.error ?? commands.error} />
      {list.devices === undefined && !list.error ? (
        <p class="loading">Loading scanners…</p>
      ) : (
        list.devices && (
          <>
            <ScannerTable
              devices={list.devices}
              now={now}
              nameOf={names.nameOf}
              commands={
                can('gateway.command')
                  ? {
                      byDevice: commands.byKey,
                      onSend: (device) => {
                        setStatus(undefined);
                        if (device.last_gateway_id !== null) setCommandTo({ ...device, last_gateway_id: device.last_gateway_id });
                      },
                    }
                  : undefined
              }
              empty={filtered ? 'No scanner matches the filters.' : 'No scanners yet: they appear with the first event their gateway relays.'}
            />
            {(list.page > 0 || list.hasNext) && (
              <KeysetPager page={list.page} pageSize={SCANNER_PAGE_SIZE} rows={list.devices.length} hasNext={list.hasNext} noun="Scanners" onPrevious={list.previous} onNext={list.next} />
            )}
          </>
        )
      )}
      {commandTo && (
        <ScannerCommandDialog
          device={commandTo}
          gatewayName={names.nameOf(commandTo.last_gateway_id)}
          onClose={() => setCommandTo(undefined)}
          onSent={(command) => {
            commands.follow(commandTo.device_id, command);
            setStatus(sentSentence(command, names.nameOf(command.gateway_id)));
            setCommandTo(undefined);
          }}
        />
      )}
    </>
  );
}
