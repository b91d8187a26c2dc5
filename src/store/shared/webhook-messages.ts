import { randomUUID } from 'node:crypto';

/** Matches the `event_types` (JSON text) of a webhook that takes `type`. */
export const takingType = (type: string): string => `%"${type}"%`;

/** An enabled webhook that takes the type of the messages being queued. */
export interface MessageWebhook {
  id: string;
  customer_id: string;
}

/** A message to queue: a pending delivery whose payload is one JSON document (docs/webhooks.md "Messages"). */
export interface MessageDelivery {
  id: string;
  webhook_id: string;
  customer_id: string;
  payload: string;
}

/**
 * One message per subject and webhook of the subject's customer, in the order of `subjects` (each
 * webhook sends its messages in that order); a payload is built only when some webhook takes it.
 */
export function messageDeliveries<T extends { customer_id: string }>(subjects: readonly T[], webhooks: readonly MessageWebhook[], payloadOf: (subject: T) => string): MessageDelivery[] {
  const deliveries: MessageDelivery[] = [];
  for (const subject of subjects) {
    let payload: string | undefined;
    for (const webhook of webhooks) {
      if (webhook.customer_id !== subject.customer_id) continue;
      payload ??= payloadOf(subject);
      deliveries.push({ id: randomUUID(), webhook_id: webhook.id, customer_id: subject.customer_id, payload });
    }
  }
  return deliveries;
}

/** The distinct customers of the subjects (whose webhooks to look up). */
export const customersOf = (subjects: readonly { customer_id: string }[]): string[] => [...new Set(subjects.map((s) => s.customer_id))];
