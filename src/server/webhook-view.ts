import { WEBHOOK_EVENT_TYPES } from '../domain/webhooks.js';
import type { WebhookDelivery, WebhookRecord } from '../store/ports/index.js';

/** The wire form of webhooks and their deliveries (docs/webhooks.md), declared once for the routes and the OpenAPI document. */

const webhookProperties = {
  webhook_id: { type: 'string', format: 'uuid' },
  url: { type: 'string', description: 'Where messages are POSTed (https or http).' },
  event_types: { type: 'array', items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] } },
  description: { type: 'string' },
  enabled: { type: 'boolean' },
  disabled_reason: { type: ['string', 'null'], description: 'Why the service disabled the webhook (the receiver answered 410, or failed for 3 days); null otherwise.' },
  created: { type: 'integer', description: 'Milliseconds since the epoch.' },
  last_updated: { type: 'integer', description: 'Milliseconds since the epoch.' },
} as const;
const WEBHOOK_FIELDS = ['webhook_id', 'url', 'event_types', 'description', 'enabled', 'disabled_reason', 'created', 'last_updated'] as const;

/** A webhook as reads show it: never its secret. */
export const webhookSchema = { type: 'object', properties: webhookProperties, required: [...WEBHOOK_FIELDS] } as const;

/** A webhook with its secret: the answers of creation and rotation only. */
export const webhookWithSecretSchema = {
  type: 'object',
  properties: {
    ...webhookProperties,
    secret: { type: 'string', description: 'whsec_ and the base64 of 32 random bytes: shown only in this answer; it signs every message (Standard Webhooks).' },
  },
  required: [...WEBHOOK_FIELDS, 'secret'],
} as const;

export const deliverySchema = {
  type: 'object',
  properties: {
    delivery_id: { type: 'string', description: 'Also the message\'s webhook-id header.' },
    type: { type: 'string' },
    attempts: { type: 'integer' },
    status: { type: 'string', enum: ['PENDING', 'SUCCEEDED', 'FAILED'] },
    response_status: { type: 'integer', description: 'The HTTP status of the last attempt; absent when it got no answer.' },
    latency_ms: { type: 'integer', description: 'How long the last attempt took.' },
    next_attempt: { type: 'integer', description: 'When a PENDING delivery is tried again (milliseconds since the epoch).' },
    created: { type: 'integer', description: 'Milliseconds since the epoch.' },
  },
  required: ['delivery_id', 'type', 'attempts', 'status', 'created'],
} as const;

/** The webhook as the API shows it (the secret only where the caller adds it). */
export function toWebhook(webhook: WebhookRecord) {
  return {
    webhook_id: webhook.id,
    url: webhook.url,
    event_types: webhook.event_types,
    description: webhook.description,
    enabled: webhook.enabled,
    disabled_reason: webhook.disabled_reason,
    created: webhook.created,
    last_updated: webhook.last_updated,
  };
}

/** A delivery as the API shows it: the last attempt's facts only once there was one. */
export function toDeliveryView(delivery: WebhookDelivery) {
  return {
    delivery_id: delivery.id,
    type: delivery.type,
    attempts: delivery.attempts,
    status: delivery.status,
    ...(delivery.response_status !== null ? { response_status: delivery.response_status } : {}),
    ...(delivery.latency_ms !== null ? { latency_ms: delivery.latency_ms } : {}),
    ...(delivery.status === 'PENDING' && delivery.next_attempt !== null ? { next_attempt: delivery.next_attempt } : {}),
    created: delivery.created,
  };
}
