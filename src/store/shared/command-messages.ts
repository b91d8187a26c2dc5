import { randomUUID } from 'node:crypto';
import { commandStatusMessage, type CommandRecord } from '../../domain/commands.js';

/** The webhook message type of a command's change of status (docs/commands.md "Webhooks"). */
export const COMMAND_STATUS_TYPE = 'command.status';

/** Matches the `event_types` (JSON text) of a webhook that takes `command.status`. */
export const COMMAND_STATUS_LIKE = `%"${COMMAND_STATUS_TYPE}"%`;

/** An enabled webhook that takes `command.status`. */
export interface StatusWebhook {
  id: string;
  customer_id: string;
}

/** A `command.status` message to queue: a pending delivery whose payload is the command. */
export interface StatusDelivery {
  id: string;
  webhook_id: string;
  customer_id: string;
  payload: string;
}

/** One message per changed command and webhook of its customer, in the order of `changed` (the webhook sends them in that order). */
export function statusDeliveries(changed: readonly CommandRecord[], webhooks: readonly StatusWebhook[], now: number): StatusDelivery[] {
  const deliveries: StatusDelivery[] = [];
  for (const command of changed) {
    let payload: string | undefined;
    for (const webhook of webhooks) {
      if (webhook.customer_id !== command.customer_id) continue;
      payload ??= commandStatusMessage(command, now);
      deliveries.push({ id: randomUUID(), webhook_id: webhook.id, customer_id: command.customer_id, payload });
    }
  }
  return deliveries;
}

/** The distinct customers of the changed commands (whose webhooks to look up). */
export const customersOf = (changed: readonly CommandRecord[]): string[] => [...new Set(changed.map((c) => c.customer_id))];
