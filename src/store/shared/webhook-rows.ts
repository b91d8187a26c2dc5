import type { StreamPosition } from '../../domain/stream-cursor.js';
import { DELIVERIES_KEPT } from '../../domain/webhooks.js';
import type { AttemptOutcome, DeliveryStatus, NewDelivery, WebhookDelivery, WebhookRecord } from '../ports/index.js';
import type { WebhookSecretBox } from './sealing.js';

/**
 * The webhooks and webhook_deliveries rows as both stores keep them (lists and positions as JSON
 * text, secrets sealed), and the records they make: one mapping for both dialects.
 */

export const WEBHOOK_COLUMNS = [
  'id', 'customer_id', 'url', 'event_types', 'description', 'enabled', 'secret', 'previous_secret', 'previous_until',
  'created', 'last_updated', 'cursor', 'failing_since', 'disabled_reason',
] as const;

export const DELIVERY_COLUMNS = [
  'seq', 'id', 'webhook_id', 'customer_id', 'type', 'attempts', 'status', 'response_status', 'latency_ms', 'next_attempt',
  'created', 'from_position', 'upto_position', 'payload',
] as const;

/** Deliveries of a webhook kept beside the pending ones: the newest DELIVERIES_KEPT. */
export const KEPT_DELIVERIES = DELIVERIES_KEPT;
/** Deliveries finished per webhook between two trims: a trim reads the newest KEPT_DELIVERIES, far more than one success writes. */
export const TRIM_EVERY = 64;

/**
 * When a webhook's finished deliveries are trimmed to the newest KEPT_DELIVERIES: once every
 * TRIM_EVERY of them (counted in this process; a restart counts afresh), so a store holds at most
 * KEPT_DELIVERIES + 2 x TRIM_EVERY of them, and the deliveries list shows the newest.
 */
export class DeliveryTrims {
  private readonly finished = new Map<string, number>();

  /** `count` deliveries of the webhook finished: whether to trim now. */
  due(webhookId: string, count: number): boolean {
    const finished = (this.finished.get(webhookId) ?? 0) + count;
    const due = finished >= TRIM_EVERY;
    this.finished.set(webhookId, due ? 0 : finished);
    return due;
  }
}

export interface WebhookRow {
  id: string;
  customer_id: string;
  url: string;
  event_types: string;
  description: string;
  enabled: number | boolean;
  secret: Uint8Array;
  previous_secret: Uint8Array | null;
  previous_until: number | null;
  created: number;
  last_updated: number;
  cursor: string;
  failing_since: number | null;
  disabled_reason: string | null;
}

export interface DeliveryRow {
  seq: number;
  id: string;
  webhook_id: string;
  customer_id: string;
  type: string;
  attempts: number;
  status: string;
  response_status: number | null;
  latency_ms: number | null;
  next_attempt: number | null;
  created: number;
  from_position: string | null;
  upto_position: string | null;
  payload: string | null;
}

const position = (text: string | null): StreamPosition | null => (text === null ? null : (JSON.parse(text) as StreamPosition));

/** The record of a row, its secrets opened with `key`. */
export function toWebhookRecord(row: WebhookRow, box: WebhookSecretBox, key: Buffer): WebhookRecord {
  return {
    id: row.id,
    customer_id: row.customer_id,
    url: row.url,
    event_types: JSON.parse(row.event_types) as string[],
    description: row.description,
    enabled: row.enabled === true || row.enabled === 1,
    secret: box.open(key, row.id, row.secret),
    previous_secret: row.previous_secret === null ? null : box.open(key, row.id, row.previous_secret),
    previous_until: row.previous_until,
    created: row.created,
    last_updated: row.last_updated,
    cursor: position(row.cursor)!,
    failing_since: row.failing_since,
    disabled_reason: row.disabled_reason,
  };
}

/** The row of a record, its secrets sealed with `key` (`enabled` as the dialect keeps it). */
export function toWebhookRow(record: WebhookRecord, box: WebhookSecretBox, key: Buffer, enabled: (value: boolean) => number | boolean): WebhookRow {
  return {
    ...record,
    event_types: JSON.stringify(record.event_types),
    enabled: enabled(record.enabled),
    secret: box.seal(key, record.id, record.secret),
    previous_secret: record.previous_secret === null ? null : box.seal(key, record.id, record.previous_secret),
    cursor: JSON.stringify(record.cursor),
  };
}

export function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    customer_id: row.customer_id,
    type: row.type,
    attempts: row.attempts,
    status: row.status as DeliveryStatus,
    response_status: row.response_status,
    latency_ms: row.latency_ms,
    next_attempt: row.next_attempt,
    created: row.created,
    from: position(row.from_position),
    upto: position(row.upto_position),
    payload: row.payload,
  };
}

/** The values of a new delivery's row: PENDING with no attempt yet, or (`done`) SUCCEEDED at its first. */
export function newDeliveryValues(delivery: NewDelivery, done?: AttemptOutcome) {
  return {
    id: delivery.id,
    webhook_id: delivery.webhook_id,
    customer_id: delivery.customer_id,
    type: delivery.type,
    attempts: done ? 1 : 0,
    status: done ? 'SUCCEEDED' : 'PENDING',
    response_status: done?.response_status ?? null,
    latency_ms: done?.latency_ms ?? null,
    created: delivery.created,
    from_position: delivery.from === null ? null : JSON.stringify(delivery.from),
    upto_position: delivery.upto === null ? null : JSON.stringify(delivery.upto),
    payload: delivery.payload,
  };
}
