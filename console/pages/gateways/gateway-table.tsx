import type { Gateway } from '../../../src/client/gateways';
import { Table, type Column } from '../../components/table';
import { can } from '../../lib/session';
import { ConnectivityBadge } from './connectivity-badge';
import { GatewayActions, type GatewayAction } from './gateway-actions';
import { LastSeen } from './last-seen';

interface Props {
  gateways: readonly Gateway[];
  now: number;
  busy: { id: string; action: GatewayAction } | undefined;
  onAction: (action: GatewayAction, gateway: Gateway) => void;
  empty: string;
}

/** One page of the board: a row per gateway, its name first, a link to its page. */
export function GatewayTable({ gateways, now, busy, onAction, empty }: Props) {
  const columns: Column<Gateway>[] = [
    { header: 'Name', cell: (g) => <a href={`#/gateways/${encodeURIComponent(g.id)}`}>{g.name}</a>, rowHeader: true, class: 'name' },
    { header: 'Status', cell: (g) => <ConnectivityBadge status={g.connectivity_status} /> },
    { header: 'Last seen', cell: (g) => <LastSeen at={g.last_seen} now={now} />, class: 'nowrap' },
    { header: 'Station', cell: (g) => g.station },
    { header: 'Use case', cell: (g) => g.usecase },
  ];
  // A user who may do nothing to gateways gets no empty column of buttons.
  if (can('gateway.provision') || can('gateway.write')) {
    columns.push({
      header: 'Actions',
      cell: (g) => <GatewayActions gateway={g} busy={busy?.id === g.id ? busy.action : undefined} onAction={onAction} />,
    });
  }
  return <Table caption="Gateways" columns={columns} rows={gateways} rowKey={(g) => g.id} empty={empty} />;
}
