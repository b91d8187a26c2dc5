import { commandStatusMessage, type CommandRecord } from '../../domain/commands.js';
import { COMMAND_STATUS_TYPE } from '../shared/command-messages.js';
import type { Queryable } from './pool.js';
import { SIGNAL_CHANNEL } from './signals.js';
import { queueMessages } from './webhook-messages.js';

// Sent inside the transaction: the deliverers hear `webhook-changed` exactly when it commits.
const NOTIFY_SQL = `SELECT pg_notify('${SIGNAL_CHANNEL}', json_build_object('kind', 'webhook-changed', 'webhook_id', w)::text) FROM unnest($1::text[]) AS w`;

/**
 * Queues a `command.status` message for each changed command and each enabled webhook of its
 * customer that takes the type, in the caller's transaction (docs/commands.md "Webhooks"), and
 * wakes those webhooks' deliverers with the commit.
 */
export async function queueStatusMessages(client: Queryable, changed: readonly CommandRecord[], now: number): Promise<void> {
  const told = await queueMessages(client, COMMAND_STATUS_TYPE, changed, (command) => commandStatusMessage(command, now), now);
  if (told.length > 0) await client.query(NOTIFY_SQL, [told]);
}
