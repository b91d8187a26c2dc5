import { collectAll, seg, type CustomerApi } from './api.js';

/** A webhook as the API shows it (docs/webhooks.md); `secret` only in the answers of creation and rotation. */
export interface Webhook {
  webhook_id: string;
  url: string;
  event_types: string[];
  description: string;
  enabled: boolean;
  disabled_reason: string | null;
  created: number;
  last_updated: number;
  secret?: string;
}

export interface NewWebhook {
  url: string;
  event_types: string[];
  description?: string;
  enabled?: boolean;
}

/** One message to a webhook and the outcome of its last attempt. */
export interface WebhookDelivery {
  delivery_id: string;
  type: string;
  attempts: number;
  status: 'PENDING' | 'SUCCEEDED' | 'FAILED';
  response_status?: number;
  latency_ms?: number;
  next_attempt?: number;
  created: number;
}

const webhooksPath = (api: CustomerApi) => `${api.base}/webhooks`;
const webhookPath = (api: CustomerApi, id: string) => `${webhooksPath(api)}/${seg(id)}`;

/** Creates a webhook; the answer is the only one with its secret. */
export function createWebhook(api: CustomerApi, webhook: NewWebhook): Promise<Webhook & { secret: string }> {
  return api.client.post<Webhook & { secret: string }>(webhooksPath(api), webhook);
}

export function listWebhooks(api: CustomerApi): Promise<Webhook[]> {
  return collectAll<Webhook>(api.client, webhooksPath(api));
}

export function getWebhook(api: CustomerApi, id: string): Promise<Webhook> {
  return api.client.get<Webhook>(webhookPath(api, id));
}

export function updateWebhook(api: CustomerApi, id: string, change: Partial<NewWebhook>): Promise<Webhook> {
  return api.client.patch<Webhook>(webhookPath(api, id), change);
}

export function deleteWebhook(api: CustomerApi, id: string): Promise<void> {
  return api.client.delete(webhookPath(api, id));
}

/** Queues a webhook.test message. */
export function testWebhook(api: CustomerApi, id: string): Promise<WebhookDelivery> {
  return api.client.post<WebhookDelivery>(`${webhookPath(api, id)}/test`);
}

/** The webhook's deliveries, newest first (the service keeps the newest 500). */
export async function listWebhookDeliveries(api: CustomerApi, id: string, limit = 500): Promise<WebhookDelivery[]> {
  return (await api.client.get<{ items: WebhookDelivery[] }>(`${webhookPath(api, id)}/deliveries?limit=${limit}`)).items;
}

/** Sends the events again from `since` (milliseconds since the epoch). */
export function replayWebhook(api: CustomerApi, id: string, since: number): Promise<{ webhook_id: string; since: number }> {
  return api.client.post<{ webhook_id: string; since: number }>(`${webhookPath(api, id)}/replay`, { since });
}

/** A new secret (shown once); the previous one also signs for 24 hours. */
export function rotateWebhookSecret(api: CustomerApi, id: string): Promise<Webhook & { secret: string }> {
  return api.client.post<Webhook & { secret: string }>(`${webhookPath(api, id)}/rotate-secret`);
}
