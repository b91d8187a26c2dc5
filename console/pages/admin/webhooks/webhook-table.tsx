import type { Webhook } from '../../../../src/client/webhooks';
import { Table } from '../../../components/table';
import { EventTypes } from './event-types';
import { webhookRoute } from './webhook-route';
import { WebhookState } from './webhook-state';

/** The customer's webhooks, a row each; the URL leads to the webhook's actions and deliveries. */
export function WebhookTable({ webhooks }: { webhooks: readonly Webhook[] }) {
  return (
    <Table
      caption="Webhooks"
      columns={[
        {
          header: 'URL',
          rowHeader: true,
          class: 'webhook-url',
          cell: (w) => (
            <a class="mono" href={webhookRoute(w.webhook_id)}>
              {w.url}
            </a>
          ),
        },
        { header: 'Events', cell: (w) => <EventTypes types={w.event_types} /> },
        { header: 'State', cell: (w) => <WebhookState webhook={w} /> },
        { header: 'Description', cell: (w) => w.description },
      ]}
      rows={webhooks}
      rowKey={(w) => w.webhook_id}
      empty="No webhooks."
    />
  );
}
