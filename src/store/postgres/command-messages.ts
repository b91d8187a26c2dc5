import type { CommandRecord } from '../../domain/commands.js';
import { COMMAND_STATUS_LIKE, COMMAND_STATUS_TYPE, customersOf, statusDeliveries, type StatusWebhook } from '../shared/command-messages.js';
import type { Queryable } from './pool.js';
import { SIGNAL_CHANNEL } from './signals.js';

// One row per element, in their order: `seq` numbers a webhook's messages in the order of the changes.
const INSERT_SQL = `INSERT INTO webhook_deliveries (id, webhook_id, customer_id, type, attempts, status, created, payload)
  SELECT d.id, d.webhook_id, d.customer_id, '${COMMAND_STATUS_TYPE}', 0, 'PENDING', $1, d.payload
  FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS d(id, webhook_id, customer_id, payload, n)
  ORDER BY d.n`;

// Sent inside the transaction: the deliverers hear `webhook-changed` exactly when it commits.
const NOTIFY_SQL = `SELECT pg_notify('${SIGNAL_CHANNEL}', json_build_object('kind', 'webhook-changed', 'webhook_id', w)::text) FROM unnest($1::text[]) AS w`;

/**
 * Queues a `command.status` message for each changed command and each enabled webhook of its
 * customer that takes the type, in the caller's transaction (docs/commands.md "Webhooks"), and
 * wakes those webhooks' deliverers with the commit.
 */
export async function queueStatusMessages(client: Queryable, changed: readonly CommandRecord[], now: number): Promise<void> {
  if (changed.length === 0) return;
  const { rows: webhooks } = await client.query<StatusWebhook>('SELECT id, customer_id FROM webhooks WHERE enabled AND event_types LIKE $1 AND customer_id = ANY($2::text[])', [
    COMMAND_STATUS_LIKE,
    customersOf(changed),
  ]);
  if (webhooks.length === 0) return;
  const deliveries = statusDeliveries(changed, webhooks, now);
  await client.query(INSERT_SQL, [now, deliveries.map((d) => d.id), deliveries.map((d) => d.webhook_id), deliveries.map((d) => d.customer_id), deliveries.map((d) => d.payload)]);
  await client.query(NOTIFY_SQL, [[...new Set(deliveries.map((d) => d.webhook_id))]]);
}
