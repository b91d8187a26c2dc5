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
 * Whether a stored event is of a type the webhook takes: its `type` when a commit handed it over,
 * else read off its JSON text without parsing it or making a string: the first `"type":"` is the
 * key (inside a string value the quotes are escaped, and `gateway_type` has no quote before
 * `type`); an event without one is a scan.
 */
function taken(event: CommittedEvent, wanted: Set<string>): boolean {
  if (event.type !== undefined) return wanted.has(EVENT_TYPES.get(event.type) ?? `event.${event.type}`);
  const at = event.json.indexOf('"type":"');
  if (at === -1) return wanted.has('event.scan');
  for (const type of wanted) if (event.json.startsWith(TYPE_TEXT.get(type) ?? `${type.slice(6)}"`, at + 8)) return true;
  return false;
}

/** The webhook event type of each event type (`scan`: `event.scan`). */
const EVENT_TYPES = new Map(['scan', 'telemetry'].map((type) => [type, `event.${type}`]));

/** The text after `"type":"` of each webhook event type (`event.scan`: `scan"`). */
const TYPE_TEXT = new Map(['event.scan', 'event.telemetry'].map((type) => [type, `${type.slice(6)}"`]));

/** The event types of `event_types` (`event.scan`, `event.telemetry`) a webhook takes. */
function wantedEvents(webhook: WebhookRecord): Set<string> {
  return new Set(webhook.event_types.filter((type) => type.startsWith('event.')));
}

/** A batch as built from the events after a position: its last event, where its reading began, its `data` (UTF-8 JSON, in pieces). */
interface BuiltBatch {
  upto: StreamPosition;
  scanned: StreamPosition;
  data: Buffer[];
}

/** Batches kept for the webhooks that reach the same position next (a few per customer and type set). */
const SHARED_BATCHES = 32;

/**
 * The batches built lately, shared by the webhooks that take the same event types from the same
 * position (those of a customer that keep up read the same events): each batch's JSON is joined
 * and encoded once, not once per webhook. The events of a range never change, so a batch built
 * for one webhook is the batch of another one at that position (docs/webhooks.md "Messages").
 */
export class SharedBatches {
  private readonly built = new Map<string, Promise<BuiltBatch | { scanned: StreamPosition }>>();

  /** The batch read from a position, or the read under way: webhooks woken together read it once. */
  get(key: string, read: () => Promise<BuiltBatch | { scanned: StreamPosition }>): Promise<BuiltBatch | { scanned: StreamPosition }> {
    let built = this.built.get(key);
    if (built) return built;
    built = read();
    this.built.set(key, built);
    // None found (yet), or the read failed: the next look reads again.
    built.then((batch) => 'data' in batch || this.built.delete(key), () => this.built.delete(key));
    // The oldest first out (a Map iterates in insertion order).
    if (this.built.size > SHARED_BATCHES) this.built.delete(this.built.keys().next().value!);
    return built;
  }
}

/**
 * The next batch after the webhook's cursor: up to EVENTS_PER_MESSAGE events of the types it
 * takes, in commit order (the others are passed over), as a delivery from the cursor to the last
 * of them. Undefined when there is none yet; `scanned` is how far the log was read without finding
 * one (the next call starts there). `shared`: the batches other webhooks built, and where this one's goes.
 */
export async function nextBatch(
  log: EventReader,
  webhook: WebhookRecord,
  scanned: StreamPosition,
  now: number,
  shared?: SharedBatches,
): Promise<{ delivery: NewDelivery | undefined; scanned: StreamPosition; data?: Buffer[] }> {
  const wanted = wantedEvents(webhook);
  let position = laterPosition(scanned, webhook.cursor);
  if (wanted.size === 0) return { delivery: undefined, scanned: position };
  const key = `${webhook.customer_id} ${[...wanted].sort().join(',')} ${position.join(',')}`;
  const read = () => readBatch(log, webhook.customer_id, wanted, position);
  const built = await (shared ? shared.get(key, read) : read());
  if (!('data' in built)) return { delivery: undefined, scanned: built.scanned };
  return {
    delivery: { id: randomUUID(), webhook_id: webhook.id, customer_id: webhook.customer_id, type: EVENT_BATCH_TYPE, created: now, from: webhook.cursor, upto: built.upto, payload: null },
    scanned: built.scanned,
    // The events as read: the first attempt sends them without reading them again.
    data: built.data,
  };
}

/** Reads on from `position` to the next events of the wanted types: the batch of them, or how far the log was read without finding one. */
async function readBatch(log: EventReader, customerId: string, wanted: Set<string>, position: StreamPosition): Promise<BuiltBatch | { scanned: StreamPosition }> {
  for (;;) {
    const read = await log.after(customerId, position, EVENTS_PER_MESSAGE);
    const events = read.events.filter((event) => taken(event, wanted));
    const last = events[events.length - 1];
    if (last) return { upto: last.position, scanned: position, data: jsonArray(events) };
    position = laterPosition(position, read.reached);
    if (!read.more) return { scanned: position };
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
      if (taken(event, wanted)) items.push(event.json);
    }
    const reached = read.events.length > 0 ? read.events[read.events.length - 1]!.position : read.reached;
    if (comparePositions(reached, position) <= 0) break;
    position = reached;
    if (!read.more && read.events.length === 0) break;
  }
  return `[${items.join(',')}]`;
}

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');
const BODY_END = Buffer.from('}');

/**
 * The events as a JSON array in UTF-8 pieces: each run of events handed over by one commit is
 * one slice of its bytes (they lie there one after the other, separated by commas); the events
 * read from the store are joined and encoded.
 */
function jsonArray(events: readonly CommittedEvent[]): Buffer[] {
  const runs: Buffer[] = [];
  let texts: string[] = [];
  const encodeTexts = () => {
    if (texts.length > 0) runs.push(Buffer.from(texts.join(',')));
    texts = [];
  };
  for (let i = 0; i < events.length; ) {
    const first = events[i]!;
    if (first.utf8 === undefined) {
      texts.push(first.json);
      i++;
      continue;
    }
    encodeTexts();
    let end = first.end!;
    for (i++; i < events.length && events[i]!.utf8 === first.utf8 && events[i]!.start === end + 1; i++) end = events[i]!.end!;
    runs.push(first.utf8.subarray(first.start, end));
  }
  encodeTexts();
  const pieces: Buffer[] = [OPEN];
  for (const run of runs) {
    if (pieces.length > 1) pieces.push(COMMA);
    pieces.push(run);
  }
  pieces.push(CLOSE);
  return pieces;
}

/**
 * The message's body, UTF-8 in pieces: `{ type, timestamp, data }` (Standard Webhooks),
 * `timestamp` when the delivery was made. A batch's events are read again from the log unless
 * `data` has them.
 */
export async function messageBody(log: EventReader, webhook: WebhookRecord, delivery: WebhookDelivery, data?: Buffer[]): Promise<Buffer[]> {
  data ??= [Buffer.from(delivery.from && delivery.upto ? await batchData(log, webhook, delivery) : (delivery.payload ?? 'null'))];
  const start = `{"type":${JSON.stringify(delivery.type)},"timestamp":${JSON.stringify(new Date(delivery.created).toISOString())},"data":`;
  return [Buffer.from(start), ...data, BODY_END];
}

/** The Standard Webhooks headers of one attempt: its id, the time of the attempt, and a signature per secret in force. */
export function signedHeaders(webhook: WebhookRecord, delivery: WebhookDelivery, body: readonly Buffer[], now: number): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  const secrets = [webhook.secret];
  if (webhook.previous_secret !== null && webhook.previous_until !== null && now < webhook.previous_until) secrets.push(webhook.previous_secret);
  return {
    'webhook-id': delivery.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': webhookSignatureHeader(secrets, delivery.id, timestamp, body),
  };
}
