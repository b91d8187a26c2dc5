import { customersOf, messageDeliveries, takingType, type MessageWebhook } from '../shared/webhook-messages.js';
import type { Db } from './open.js';
import { prepared } from './statements.js';

/** The webhooks looked up in one transaction, by type and customers: the writes of a group share one lookup. */
export type WebhookMemo = Map<string, MessageWebhook[]>;

/**
 * Queues a `type` message for each subject and each enabled webhook of its customer that takes the
 * type, in the caller's transaction; adds the webhooks told to `told`, to be woken after the commit.
 * `memo` lives no longer than the transaction (nothing else writes the webhooks meanwhile).
 */
export function queueMessages<T extends { customer_id: string }>(
  db: Db,
  type: string,
  subjects: readonly T[],
  payloadOf: (subject: T) => string,
  now: number,
  told: Set<string>,
  memo?: WebhookMemo,
): void {
  if (subjects.length === 0) return;
  const customers = customersOf(subjects);
  const key = `${type}\n${customers.join('\n')}`;
  let webhooks = memo?.get(key);
  if (!webhooks) {
    webhooks = prepared(db, 'SELECT id, customer_id FROM webhooks WHERE enabled = 1 AND event_types LIKE ? AND customer_id IN (SELECT value FROM json_each(?))').all(
      takingType(type),
      JSON.stringify(customers),
    ) as MessageWebhook[];
    memo?.set(key, webhooks);
  }
  if (webhooks.length === 0) return;
  const insert = prepared(
    db,
    `INSERT INTO webhook_deliveries (id, webhook_id, customer_id, type, attempts, status, created, payload)
     VALUES (@id, @webhook_id, @customer_id, @type, 0, 'PENDING', @now, @payload)`,
  );
  for (const delivery of messageDeliveries(subjects, webhooks, payloadOf)) {
    insert.run({ ...delivery, type, now });
    told.add(delivery.webhook_id);
  }
}
