import type { Command } from 'commander';
import { createWebhook } from '../../client/webhooks.js';
import { WEBHOOK_EVENT_TYPES } from '../../domain/webhooks.js';
import { CliError, Exit, success } from '../io.js';
import { connect } from '../session.js';

/**
 * `--url` names the receiver, as the issue spells the command; it is also the global flag of the
 * deployment (commander gives it to the program), so here it is taken from there and the
 * deployment comes from the environment or the profile.
 */
function receiverFromUrlFlag(command: Command): string {
  const program = command.parent!.parent!;
  const url = program.opts<{ url?: string }>().url;
  if (url === undefined) throw new CliError('the receiver\'s URL is missing: give it as the argument or with --url', Exit.USAGE);
  program.setOptionValue('url', undefined);
  return url;
}

/** `scanhub webhooks create --url U --events a,b` (or `create U --events a,b`): the secret is printed once. */
export function registerCreateCommand(webhooks: Command): void {
  webhooks
    .command('create [url]')
    .description('create a webhook to URL (https, or http) and print its signing secret, once')
    .requiredOption('--events <types>', `comma-separated types: ${WEBHOOK_EVENT_TYPES.join(', ')}`)
    .option('--description <text>', 'what the webhook is for')
    .option('--disabled', 'create it disabled (enable it with the API\'s PATCH)')
    .addHelpText(
      'after',
      '\nThe receiver\'s URL is the argument, or --url: then the deployment comes from SCANHUB_URL or `scanhub login`, not from --url.\n' +
        'Example:\n  scanhub webhooks create --url https://erp.example.com/hooks/scans --events event.scan,alert.opened',
    )
    .action(async (argument: string | undefined, options: { events: string; description?: string; disabled?: boolean }, command: Command) => {
      const url = argument ?? receiverFromUrlFlag(command);
      const eventTypes = options.events.split(',').map((type) => type.trim()).filter((type) => type !== '');
      const unknown = eventTypes.filter((type) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(type));
      if (eventTypes.length === 0 || unknown.length > 0) {
        throw new CliError(`--events: ${unknown.length > 0 ? `unknown type "${unknown[0]}"` : 'no type given'}: use some of ${WEBHOOK_EVENT_TYPES.join(', ')}`, Exit.USAGE);
      }
      const session = await connect(command);
      const created = await createWebhook(session, {
        url,
        event_types: eventTypes,
        ...(options.description !== undefined ? { description: options.description } : {}),
        ...(options.disabled ? { enabled: false } : {}),
      });
      if (session.io.json) session.io.out(JSON.stringify(created, null, 2));
      else session.io.out(created.secret);
      success(
        session.io,
        `Created webhook ${created.webhook_id} to ${created.url} for ${created.event_types.join(', ')}. ` +
          'This is the only time the secret is shown: give it to the receiver, which verifies each message with it (Standard Webhooks).',
      );
    });
}
