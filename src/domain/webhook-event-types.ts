/**
 * The types a webhook may subscribe to (docs/webhooks.md): apart from src/domain/webhooks.ts,
 * which needs Node, so that the console offers exactly these (it bundles only code without imports).
 */
export const WEBHOOK_EVENT_TYPES = [
  'event.scan',
  'event.telemetry',
  'gateway.connectivity',
  'command.status',
  'alert.opened',
  'alert.resolved',
  'job.completed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export function isWebhookEventType(value: string): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}
