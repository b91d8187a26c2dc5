import type { AuditItem } from '../../../src/client/audit';
import { Table } from '../../components/table';
import { dateTime } from '../../lib/time';

/** Who acted, as `scanhub audit` prints it: `user EMAIL`, `api_key ID`, `device GATEWAY`, `operator`. */
function actorOf({ actor }: AuditItem): string {
  if (actor.type === 'operator') return 'operator';
  return `${actor.type} ${actor.email ?? actor.id}`;
}

/** One page of the audit log, newest first. */
export function AuditTable({ items }: { items: readonly AuditItem[] }) {
  return (
    <Table
      caption="Audit log"
      columns={[
        { header: 'Time', cell: (e) => <time dateTime={new Date(e.time).toISOString()}>{dateTime(e.time)}</time>, rowHeader: true, class: 'nowrap' },
        { header: 'Action', cell: (e) => <span class="mono">{e.action}</span>, class: 'nowrap' },
        { header: 'Actor', cell: actorOf },
        { header: 'Target', cell: (e) => (e.target ? `${e.target.type} ${e.target.id}` : ''), class: 'audit-id' },
        { header: 'Address', cell: (e) => e.ip ?? '' },
        { header: 'Details', cell: (e) => (e.details ? <code>{JSON.stringify(e.details)}</code> : ''), class: 'audit-details' },
      ]}
      rows={items}
      rowKey={(e) => e.id}
      empty="No entries in this range."
    />
  );
}
