import { randomUUID } from 'node:crypto';
import { comparePositions, laterPosition, type StreamPosition } from '../domain/stream-cursor.js';
import { webhookSignatureHeader } from '../domain/webhook-signature.js';
import { EVENTS_PER_MESSAGE, EVENT_BATCH_TYPE } from '../domain/webhooks.js';
import type { CommittedEvent, EventLogRepository, NewDelivery, WebhookDelivery, WebhookRecord } from '../store/ports/index.js';

/** What the messages read the commit order through (RecentEvents, or the store's event log). */
type EventReader = Pick<EventLogRepository, 'after'>;

/**
 * The messages of a webhook (docs/webhooks.md "Messages"): batches of stored events read from its
 * cursor, and the bodies and signed headers of whatever it sends.
 */

/**
 * The webhook type of a stored event (`scan` -> `event.scan`), read off its JSON text without
 * parsing it: the first `"type":"` is the key (inside a string value the quotes are escaped, and
 * `gateway_type` has no quote before `type`).
 */
function typeOf(event: CommittedEvent): string {
  const at = event.json.indexOf('"type":"');
  if (at === -1) return 'event.scan';
  const start = at + 8;
  return `event.${event.json.slice(start, event.json.indexOf('"', start))}`;
}

/** The event types of `event_types` (`event.scan`, `event.telemetry`) a webhook takes. */
function wantedEvents(webhook: WebhookRecord): Set<string> {
  return new Set(webhook.event_types.filter((type) => type.startsWith('event.')));
}

/**
 * The next batch after the webhook's cursor: up to EVENTS_PER_MESSAGE events of the types it
 * takes, in commit order (the others are passed over), as a delivery from the cursor to the last
 * of them. Undefined when there is none yet; `scanned` is how far the log was read without finding
 * one (the next call starts there).
 */
export async function nextBatch(
  log: EventReader,
  webhook: WebhookRecord,
  scanned: StreamPosition,
  now: number,
): Promise<{ delivery: NewDelivery | undefined; scanned: StreamPosition; data?: string }> {
  const wanted = wantedEvents(webhook);
  let position = laterPosition(scanned, webhook.cursor);
  if (wanted.size === 0) return { delivery: undefined, scanned: position };
  for (;;) {
    const read = await log.after(webhook.customer_id, position, EVENTS_PER_MESSAGE);
    const taken = read.events.filter((event) => wanted.has(typeOf(event)));
    const last = taken[taken.length - 1];
    if (last) {
      return {
        delivery: { id: randomUUID(), webhook_id: webhook.id, customer_id: webhook.customer_id, type: EVENT_BATCH_TYPE, created: now, from: webhook.cursor, upto: last.position, payload: null },
        scanned: position,
        // The events as read: the first attempt sends them without reading them again.
        data: `[${taken.map((event) => event.json).join(',')}]`,
      };
    }
    position = laterPosition(position, read.reached);
    if (!read.more) return { delivery: undefined, scanned: position };
  }
}

/** The JSON of the events a batch carries: those of the types the webhook takes after `from` up to `upto`, read again from the log. */
async function batchData(log: EventReader, webhook: WebhookRecord, delivery: WebhookDelivery): Promise<string> {
  const wanted = wantedEvents(webhook);
  const items: string[] = [];
  let position = delivery.from!;
  const upto = delivery.upto!;
  while (comparePositions(position, upto) < 0) {
    const read = await log.after(delivery.customer_id, position, EVENTS_PER_MESSAGE);
    for (const event of read.events) {
      if (comparePositions(event.position, upto) > 0) break;
      if (wanted.has(typeOf(event))) items.push(event.json);
    }
    const reached = read.events.length > 0 ? read.events[read.events.length - 1]!.position : read.reached;
    if (comparePositions(reached, position) <= 0) break;
    position = reached;
    if (!read.more && read.events.length === 0) break;
  }
  return `[${items.join(',')}]`;
}

/**
 * The message's body: `{ type, timestamp, data }` (Standard Webhooks), `timestamp` when the
 * delivery was made. A batch's events are read again from the log unless `data` has them.
 */
export async function messageBody(log: EventReader, webhook: WebhookRecord, delivery: WebhookDelivery, data?: string): Promise<string> {
  data ??= delivery.from && delivery.upto ? await batchData(log, webhook, delivery) : (delivery.payload ?? 'null');
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
