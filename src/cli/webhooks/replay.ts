import type { Command } from 'commander';
import { replayWebhook } from '../../client/webhooks.js';
import { timeFlag } from '../flags.js';
import { formatTime, success } from '../io.js';
import { connect } from '../session.js';
import { findWebhook } from './refs.js';

/** `scanhub webhooks replay <webhook> --since 1h`. */
export function registerReplayCommand(webhooks: Command): void {
  webhooks
    .command('replay <webhook>')
    .description('send the events again from a time, in order (the receiver tells repeats by event id)')
    .requiredOption('--since <time>', 'from when: a duration back from now (90m, 1d), an ISO 8601 date or date-time, or epoch milliseconds')
    .addHelpText('after', '\nExample:\n  scanhub webhooks replay https://erp.example.com/hooks/scans --since 1h')
    .action(async (ref: string, options: { since: string }, command: Command) => {
      const since = timeFlag('--since', options.since, Date.now());
      const session = await connect(command);
      const webhook = await findWebhook(session, ref);
      const answer = await replayWebhook(session, webhook.webhook_id, since);
      if (session.io.json) session.io.out(JSON.stringify(answer, null, 2));
      success(session.io, `Webhook ${webhook.webhook_id} sends the events created since ${formatTime(session.io, since) || new Date(since).toISOString()} again.`);
    });
}
