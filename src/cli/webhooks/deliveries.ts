import type { Command } from 'commander';
import { listWebhookDeliveries, type WebhookDelivery } from '../../client/webhooks.js';
import { formatTime, printList, type Column, type Io } from '../io.js';
import { connect } from '../session.js';
import { findWebhook } from './refs.js';

const columns = (io: Io): Column<WebhookDelivery>[] => [
  { header: 'ID', value: (d) => d.delivery_id },
  { header: 'TYPE', value: (d) => d.type },
  { header: 'STATUS', value: (d) => d.status },
  { header: 'ATTEMPTS', value: (d) => String(d.attempts) },
  { header: 'HTTP', value: (d) => (d.response_status === undefined ? '' : String(d.response_status)) },
  { header: 'LATENCY', value: (d) => (d.latency_ms === undefined ? '' : `${d.latency_ms} ms`) },
  { header: 'NEXT ATTEMPT', value: (d) => formatTime(io, d.next_attempt) },
  { header: 'CREATED', value: (d) => formatTime(io, d.created) },
];

/** `scanhub webhooks deliveries <webhook>`: newest first. */
export function registerDeliveriesCommand(webhooks: Command): void {
  webhooks
    .command('deliveries <webhook>')
    .description('list the messages sent to a webhook (by id or URL), newest first, with the outcome of the last attempt')
    .addHelpText('after', '\nExample:\n  scanhub webhooks deliveries 0b4c7a9e-5d1f-4a8e-9c3b-2f6d8e1a7b40')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      const webhook = await findWebhook(session, ref);
      printList(session.io, await listWebhookDeliveries(session, webhook.webhook_id), columns(session.io));
    });
}
