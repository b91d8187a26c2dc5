import { randomUUID } from 'node:crypto';
import { comparePositions, laterPosition, type StreamPosition } from '../domain/stream-cursor.js';
import { webhookSignatureHeader } from '../domain/webhook-signature.js';
import { EVENTS_PER_MESSAGE } from '../domain/webhooks.js';
import type { CommittedEvent, EventLogRepository, NewDelivery, WebhookDelivery, WebhookRecord } from '../store/ports/index.js';

/**
 * The messages of a webhook (docs/webhooks.md "Messages"): batches of stored events read from its
 * cursor, and the bodies and signed headers of whatever it sends.
 */

/** The webhook type of a stored event (`scan` -> `event.scan`), from its JSON text. */
function typeOf(event: CommittedEvent): string {
  return `event.${(JSON.parse(event.json) as { type?: string }).type ?? 'scan'}`;
}

/**
 * The next batch after the webhook's cursor: the first run of events of one subscribed type (up
 * to EVENTS_PER_MESSAGE; events of types it does not take are passed over), as a delivery from
 * the cursor to the run's last event. Undefined when there is none yet; `scanned` is how far the
 * log was read without finding one (the next call starts there).
 */
export async function nextBatch(
  log: EventLogRepository,
  webhook: WebhookRecord,
  scanned: StreamPosition,
  now: number,
): Promise<{ delivery: NewDelivery | undefined; scanned: StreamPosition }> {
  const wanted = new Set(webhook.event_types.filter((type) => type.startsWith('event.')));
  let position = laterPosition(scanned, webhook.cursor);
  if (wanted.size === 0) return { delivery: undefined, scanned: position };
  for (;;) {
    const read = await log.after(webhook.customer_id, position, EVENTS_PER_MESSAGE);
    let type: string | undefined;
    let upto: StreamPosition | undefined;
    let count = 0;
    for (const event of read.events) {
      const eventType = typeOf(event);
      if (!wanted.has(eventType)) continue;
      if (type !== undefined && eventType !== type) break;
      type = eventType;
      upto = event.position;
      count++;
    }
    if (type !== undefined && upto !== undefined && count > 0) {
      return {
        delivery: { id: randomUUID(), webhook_id: webhook.id, customer_id: webhook.customer_id, type, created: now, from: webhook.cursor, upto, payload: null },
        scanned: position,
      };
    }
    position = laterPosition(position, read.reached);
    if (!read.more) return { delivery: undefined, scanned: position };
  }
}

/** The JSON of the events a batch carries: those of its type after `from` up to `upto`, read again from the log. */
async function batchData(log: EventLogRepository, delivery: WebhookDelivery): Promise<string> {
  const items: string[] = [];
  let position = delivery.from!;
  const upto = delivery.upto!;
  while (comparePositions(position, upto) < 0) {
    const read = await log.after(delivery.customer_id, position, EVENTS_PER_MESSAGE);
    for (const event of read.events) {
      if (comparePositions(event.position, upto) > 0) break;
      if (typeOf(event) === delivery.type) items.push(event.json);
    }
    const reached = read.events.length > 0 ? read.events[read.events.length - 1]!.position : read.reached;
    if (comparePositions(reached, position) <= 0) break;
    position = reached;
    if (!read.more && read.events.length === 0) break;
  }
  return `[${items.join(',')}]`;
}

/** The message's body: `{ type, timestamp, data }` (Standard Webhooks), `timestamp` when the delivery was made. */
export async function messageBody(log: EventLogRepository, delivery: WebhookDelivery): Promise<string> {
  const data = delivery.from && delivery.upto ? await batchData(log, delivery) : (delivery.payload ?? 'null');
  return `{"type":${JSON.stringify(delivery.type)},"timestamp":${JSON.stringify(new Date(delivery.created).toISOString())},"data":${data}}`;
}

/** The Standard Webhooks headers of one attempt: its id, the time of the attempt, and a signature per secret in force. */
export function signedHeaders(webhook: WebhookRecord, delivery: WebhookDelivery, body: string, now: number): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  const secrets = [webhook.secret];
  if (webhook.previous_secret !== null && webhook.previous_until !== null && now < webhook.previous_until) secrets.push(webhook.previous_secret);
  return {
    'webhook-id': delivery.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': webhookSignatureHeader(secrets, delivery.id, timestamp, body),
  };
}
