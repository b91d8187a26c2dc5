import type { Command } from 'commander';
import { examples } from '../help.js';
import { registerCreateCommand } from './create.js';
import { registerDeleteAndRotateCommands } from './delete.js';
import { registerDeliveriesCommand } from './deliveries.js';
import { registerListCommand } from './list.js';
import { registerReplayCommand } from './replay.js';
import { registerTestCommand } from './test.js';

/** `scanhub webhooks create|list|deliveries|replay|test|delete|rotate-secret`. */
export function registerWebhookCommands(program: Command): void {
  const webhooks = program
    .command('webhooks')
    .description('webhooks: signed messages of events, alerts and job completions POSTed to your URLs')
    .addHelpText('after', examples(['scanhub webhooks create --url https://wms.example.com/scanhub --events event.scan,alert.opened'], 'Exit codes: 0 ok, 1 error, 2 usage, 4 not logged in or not an administrator.'));
  registerCreateCommand(webhooks);
  registerListCommand(webhooks);
  registerDeliveriesCommand(webhooks);
  registerReplayCommand(webhooks);
  registerTestCommand(webhooks);
  registerDeleteAndRotateCommands(webhooks);
}
