import type { Command } from 'commander';
import { testWebhook } from '../../client/webhooks.js';
import { success } from '../io.js';
import { connect } from '../session.js';
import { findWebhook } from './refs.js';

/** `scanhub webhooks test <webhook>`. */
export function registerTestCommand(webhooks: Command): void {
  webhooks
    .command('test <webhook>')
    .description('send a signed webhook.test message to a webhook (by id or URL)')
    .addHelpText('after', '\nExample:\n  scanhub webhooks test https://erp.example.com/hooks/scans')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      const webhook = await findWebhook(session, ref);
      const delivery = await testWebhook(session, webhook.webhook_id);
      if (session.io.json) session.io.out(JSON.stringify(delivery, null, 2));
      else session.io.out(delivery.delivery_id);
      success(session.io, `Queued a webhook.test message to ${webhook.url}: \`scanhub webhooks deliveries ${webhook.webhook_id}\` shows how it went.`);
    });
}
