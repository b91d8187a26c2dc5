import type { Command } from '../../../src/client/commands';
import type { Device } from '../../../src/client/devices';
import { Table, type Column } from '../../components/table';
import { LastSeen } from '../gateways/last-seen';
import { BatteryBadge, DeviceStatusBadge } from './device-badges';
import { ScannerCommandCell } from './scanner-command-cell';

interface Props {
  devices: readonly Device[];
  now: number;
  nameOf: (id: string | null) => string;
  empty: string;
  /** The `Command` column (offered with gateway.command): the commands sent from the page by scanner, and the button's action. */
  commands?: { byDevice: ReadonlyMap<string, Command>; onSend: (device: Device) => void };
}

/** The gateway of a scanner's newest event: its name, and beside it the start of its id (names can be alike). */
function GatewayCell({ id, name }: { id: string | null; name: string }) {
  if (id === null) return <span class="muted">none</span>;
  if (name === id) return <span class="mono">{id}</span>;
  return (
    <>
      {name} <span class="mono muted" title={id}>{id.slice(0, 8)}</span>
    </>
  );
}

/** One page of scanners, a row each, named by `device_id`. */
export function ScannerTable({ devices, now, nameOf, empty, commands }: Props) {
  const columns: Column<Device>[] = [
    { header: 'Scanner', cell: (d) => <span class="mono">{d.device_id}</span>, rowHeader: true, class: 'name' },
    { header: 'Status', cell: (d) => <DeviceStatusBadge status={d.status} /> },
    { header: 'Battery', cell: (d) => <BatteryBadge battery={d.battery} /> },
    { header: 'Last seen', cell: (d) => <LastSeen at={d.last_seen} now={now} />, class: 'nowrap' },
    { header: 'Gateway', cell: (d) => <GatewayCell id={d.last_gateway_id} name={nameOf(d.last_gateway_id)} />, class: 'nowrap' },
    { header: 'Firmware', cell: (d) => d.firmware ?? <span class="muted">unknown</span> },
  ];
  if (commands) {
    columns.push({ header: 'Command', cell: (d) => <ScannerCommandCell device={d} command={commands.byDevice.get(d.device_id)} onSend={commands.onSend} />, class: 'nowrap' });
  }
  return <Table caption="Scanners" columns={columns} rows={devices} rowKey={(d) => d.device_id} empty={empty} />;
}
