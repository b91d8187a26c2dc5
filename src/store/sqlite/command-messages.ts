import type { CommandRecord } from '../../domain/commands.js';
import { COMMAND_STATUS_LIKE, COMMAND_STATUS_TYPE, customersOf, statusDeliveries, type StatusWebhook } from '../shared/command-messages.js';
import type { Db } from './open.js';
import { prepared } from './statements.js';

/** The webhooks looked up in one transaction, by their customers: the writes of a group share one lookup. */
export type StatusWebhookMemo = Map<string, StatusWebhook[]>;

/**
 * Queues a `command.status` message for each changed command and each enabled webhook of its
 * customer that takes the type, in the caller's transaction (docs/commands.md "Webhooks"); adds
 * the webhooks told to `told`, to be woken after the commit. `memo` lives no longer than the
 * transaction (nothing else writes the webhooks meanwhile).
 */
export function queueStatusMessages(db: Db, changed: readonly CommandRecord[], now: number, told: Set<string>, memo?: StatusWebhookMemo): void {
  if (changed.length === 0) return;
  const customers = customersOf(changed);
  const key = customers.join('\n');
  let webhooks = memo?.get(key);
  if (!webhooks) {
    webhooks = prepared(
      db,
      'SELECT id, customer_id FROM webhooks WHERE enabled = 1 AND event_types LIKE ? AND customer_id IN (SELECT value FROM json_each(?))',
    ).all(COMMAND_STATUS_LIKE, JSON.stringify(customers)) as StatusWebhook[];
    memo?.set(key, webhooks);
  }
  if (webhooks.length === 0) return;
  const insert = prepared(
    db,
    `INSERT INTO webhook_deliveries (id, webhook_id, customer_id, type, attempts, status, created, payload)
     VALUES (@id, @webhook_id, @customer_id, '${COMMAND_STATUS_TYPE}', 0, 'PENDING', @now, @payload)`,
  );
  for (const delivery of statusDeliveries(changed, webhooks, now)) {
    insert.run({ ...delivery, now });
    told.add(delivery.webhook_id);
  }
}
