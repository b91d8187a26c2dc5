import type { Command } from 'commander';
import { listWebhooks, type Webhook } from '../../client/webhooks.js';
import { formatTime, printList, type Column, type Io } from '../io.js';
import { connect } from '../session.js';

const columns = (io: Io): Column<Webhook>[] => [
  { header: 'ID', value: (w) => w.webhook_id },
  { header: 'URL', value: (w) => w.url },
  { header: 'EVENTS', value: (w) => w.event_types.join(',') },
  { header: 'ENABLED', value: (w) => (w.enabled ? 'yes' : `no${w.disabled_reason ? ` (${w.disabled_reason})` : ''}`) },
  { header: 'CREATED', value: (w) => formatTime(io, w.created) },
];

/** `scanhub webhooks list`. */
export function registerListCommand(webhooks: Command): void {
  webhooks
    .command('list')
    .description('list the webhooks, enabled or not')
    .addHelpText('after', '\nExample:\n  scanhub webhooks list --json')
    .action(async (_options: unknown, command: Command) => {
      const session = await connect(command);
      printList(session.io, await listWebhooks(session), columns(session.io));
    });
}
