import type { ApiEvent } from '../../../src/client/events';
import { Table, type Column } from '../../components/table';

/** The date and the time to the millisecond: events of one second keep their order readable. */
const TIME = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  fractionalSecondDigits: 3,
  hourCycle: 'h23',
});

interface Props {
  events: readonly ApiEvent[];
  nameOf: (gatewayId: string | undefined) => string;
  empty: string;
}

/** One page of events, newest first: a row per event, its time naming it. */
export function EventsTable({ events, nameOf, empty }: Props) {
  // Not an empty table: its one wide cell would centre the sentence out of sight at 360 px.
  if (events.length === 0) return <p class="empty-list">{empty}</p>;
  const columns: Column<ApiEvent>[] = [
    { header: 'Time', cell: (e) => <time dateTime={new Date(e.created).toISOString()}>{TIME.format(e.created)}</time>, rowHeader: true, class: 'nowrap' },
    { header: 'Type', cell: (e) => e.type },
    { header: 'Scan code', cell: (e) => e.scan_code ?? '', class: 'mono nowrap' },
    { header: 'Gateway', cell: (e) => nameOf(e.gateway_id as string | undefined) },
    { header: 'Station', cell: (e) => e.gateway_station ?? '' },
    { header: 'Scanner', cell: (e) => e.device_id ?? '', class: 'mono nowrap' },
    { header: 'Battery', cell: (e) => (e.device_battery === undefined ? '' : `${e.device_battery} %`), class: 'nowrap' },
  ];
  // Rows keyed by position: the next page's rows take the elements of this page's and change
  // their text, rather than 50 rows being removed and 50 made.
  const position = new Map(events.map((e, i) => [e, String(i)]));
  return <Table caption="Events" columns={columns} rows={events} rowKey={(e) => position.get(e)!} empty={empty} />;
}
