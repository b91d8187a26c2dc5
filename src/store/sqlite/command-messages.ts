import { commandStatusMessage, type CommandRecord } from '../../domain/commands.js';
import { COMMAND_STATUS_TYPE } from '../shared/command-messages.js';
import type { Db } from './open.js';
import { queueMessages, type WebhookMemo } from './webhook-messages.js';

/** The webhooks looked up in one transaction: the writes of a group share one lookup. */
export type StatusWebhookMemo = WebhookMemo;

/**
 * Queues a `command.status` message for each changed command and each enabled webhook of its
 * customer that takes the type, in the caller's transaction (docs/commands.md "Webhooks"); adds
 * the webhooks told to `told`, to be woken after the commit.
 */
export function queueStatusMessages(db: Db, changed: readonly CommandRecord[], now: number, told: Set<string>, memo?: StatusWebhookMemo): void {
  queueMessages(db, COMMAND_STATUS_TYPE, changed, (command) => commandStatusMessage(command, now), now, told, memo);
}
