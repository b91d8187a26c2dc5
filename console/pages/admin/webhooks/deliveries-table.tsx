import { useState } from 'preact/hooks';
import type { WebhookDelivery } from '../../../../src/client/webhooks';
import { Badge } from '../../../components/badge';
import { Pager } from '../../../components/pager';
import { Table } from '../../../components/table';
import { dateTime } from '../../../lib/time';

const PAGE_SIZE = 50;
const STATUS = { PENDING: ['info', 'Pending'], SUCCEEDED: ['good', 'Succeeded'], FAILED: ['bad', 'Failed'] } as const;
const NONE = '—';

/** A webhook's deliveries, newest first, 50 a page (the API keeps the newest 500). */
export function DeliveriesTable({ deliveries }: { deliveries: readonly WebhookDelivery[] }) {
  const [page, setPage] = useState(0);
  const pageCount = Math.max(1, Math.ceil(deliveries.length / PAGE_SIZE));
  const shown = deliveries.slice(Math.min(page, pageCount - 1) * PAGE_SIZE).slice(0, PAGE_SIZE);
  return (
    <>
      <Table
        caption="Deliveries"
        columns={[
          { header: 'Type', cell: (d) => <span class="mono">{d.type}</span>, rowHeader: true, class: 'nowrap' },
          {
            header: 'Status',
            cell: (d) => {
              const [tone, word] = STATUS[d.status];
              return <Badge tone={tone}>{word}</Badge>;
            },
          },
          { header: 'Response', cell: (d) => (d.response_status === undefined ? NONE : String(d.response_status)), class: 'number' },
          { header: 'Latency', cell: (d) => (d.latency_ms === undefined ? NONE : `${d.latency_ms} ms`), class: 'number nowrap' },
          { header: 'Attempts', cell: (d) => String(d.attempts), class: 'number' },
          { header: 'Next attempt', cell: (d) => (d.next_attempt === undefined ? NONE : dateTime(d.next_attempt)), class: 'nowrap' },
          { header: 'Created', cell: (d) => dateTime(d.created), class: 'nowrap' },
          { header: 'Delivery id', cell: (d) => <span class="mono">{d.delivery_id}</span>, class: 'nowrap' },
        ]}
        rows={shown}
        rowKey={(d) => d.delivery_id}
        empty="No deliveries yet: Send test sends one."
      />
      {deliveries.length > PAGE_SIZE && <Pager page={Math.min(page, pageCount - 1)} pageSize={PAGE_SIZE} total={deliveries.length} noun="Deliveries" onPage={setPage} />}
    </>
  );
}
