import type { Command } from 'commander';
import { deleteWebhook, rotateWebhookSecret } from '../../client/webhooks.js';
import { confirmAction, success } from '../io.js';
import { connect } from '../session.js';
import { findWebhook } from './refs.js';

/** `scanhub webhooks delete <webhook>` (asks first) and `scanhub webhooks rotate-secret <webhook>`. */
export function registerDeleteAndRotateCommands(webhooks: Command): void {
  webhooks
    .command('delete <webhook>')
    .description('delete a webhook (by id or URL) and its deliveries')
    .option('--yes', 'do not ask for confirmation')
    .addHelpText('after', '\nExample:\n  scanhub webhooks delete https://erp.example.com/hooks/scans --yes')
    .action(async (ref: string, options: { yes?: boolean }, command: Command) => {
      const session = await connect(command);
      const webhook = await findWebhook(session, ref);
      await confirmAction(session.io, `Delete the webhook to ${webhook.url}? Nothing more is sent to it.`, options.yes);
      await deleteWebhook(session, webhook.webhook_id);
      if (session.io.json) session.io.out(JSON.stringify(webhook, null, 2));
      success(session.io, `Deleted webhook ${webhook.webhook_id} to ${webhook.url}.`);
    });
  webhooks
    .command('rotate-secret <webhook>')
    .description('give a webhook a new secret, printed once; the old one also signs for 24 hours')
    .addHelpText('after', '\nExample:\n  scanhub webhooks rotate-secret https://erp.example.com/hooks/scans')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      const webhook = await findWebhook(session, ref);
      const rotated = await rotateWebhookSecret(session, webhook.webhook_id);
      if (session.io.json) session.io.out(JSON.stringify(rotated, null, 2));
      else session.io.out(rotated.secret);
      success(session.io, `Webhook ${webhook.webhook_id} has a new secret; messages carry signatures of both for 24 hours: give the receiver the new one within them.`);
    });
}
