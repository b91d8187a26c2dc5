import { customersOf, messageDeliveries, takingType, type MessageWebhook } from '../shared/webhook-messages.js';
import type { Queryable } from './pool.js';

// One row per element, in their order: `seq` numbers a webhook's messages in the order of the subjects.
const INSERT_SQL = `INSERT INTO webhook_deliveries (id, webhook_id, customer_id, type, attempts, status, created, payload)
  SELECT d.id, d.webhook_id, d.customer_id, $1, 0, 'PENDING', $2, d.payload
  FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS d(id, webhook_id, customer_id, payload, n)
  ORDER BY d.n`;

/**
 * Queues a `type` message for each subject and each enabled webhook of its customer that takes the
 * type, in the caller's transaction; the webhooks told, each once (to be woken with the commit).
 */
export async function queueMessages<T extends { customer_id: string }>(client: Queryable, type: string, subjects: readonly T[], payloadOf: (subject: T) => string, now: number): Promise<string[]> {
  if (subjects.length === 0) return [];
  const { rows: webhooks } = await client.query<MessageWebhook>('SELECT id, customer_id FROM webhooks WHERE enabled AND event_types LIKE $1 AND customer_id = ANY($2::text[])', [
    takingType(type),
    customersOf(subjects),
  ]);
  if (webhooks.length === 0) return [];
  const deliveries = messageDeliveries(subjects, webhooks, payloadOf);
  await client.query(INSERT_SQL, [type, now, deliveries.map((d) => d.id), deliveries.map((d) => d.webhook_id), deliveries.map((d) => d.customer_id), deliveries.map((d) => d.payload)]);
  return [...new Set(deliveries.map((d) => d.webhook_id))];
}
