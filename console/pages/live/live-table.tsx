import type { ApiEvent } from '../../../src/client/events';
import { Table, type Column } from '../../components/table';

/** Times to the millisecond: at hundreds of scans a second, the second alone says little. */
const TIME = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3, hourCycle: 'h23' });

interface Props {
  rows: readonly ApiEvent[];
  nameOf: (gatewayId: string | undefined) => string;
  empty: string;
}

/** The scans, newest first: the scan code names each row. */
export function LiveTable({ rows, nameOf, empty }: Props) {
  // Not an empty table: its one wide cell would centre the sentence out of sight at 360 px.
  if (rows.length === 0) return <p class="empty-list">{empty}</p>;
  const columns: Column<ApiEvent>[] = [
    { header: 'Time', cell: (e) => <time dateTime={new Date(e.created).toISOString()}>{TIME.format(e.created)}</time>, class: 'nowrap' },
    { header: 'Scan code', cell: (e) => e.scan_code ?? '', rowHeader: true, class: 'mono nowrap' },
    { header: 'Gateway', cell: (e) => nameOf(e.gateway_id as string | undefined) },
    { header: 'Station', cell: (e) => e.gateway_station ?? '' },
    { header: 'Scanner', cell: (e) => e.device_id ?? '', class: 'mono' },
    { header: 'Symbology', cell: (e) => e.scan_decode_symbology ?? '' },
  ];
  return <Table caption="Scans" columns={columns} rows={rows} rowKey={(e) => e.id} empty={empty} />;
}
