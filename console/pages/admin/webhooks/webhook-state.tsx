import type { Webhook } from '../../../../src/client/webhooks';
import { Badge } from '../../../components/badge';

/** Enabled or disabled, and why the service disabled it (a receiver that failed for 3 days, or answered 410). */
export function WebhookState({ webhook }: { webhook: Webhook }) {
  if (webhook.enabled) return <Badge tone="good">Enabled</Badge>;
  return (
    <>
      <Badge tone={webhook.disabled_reason ? 'bad' : 'neutral'}>Disabled</Badge>
      {webhook.disabled_reason && <span class="webhook-reason"> by the service: {webhook.disabled_reason}</span>}
    </>
  );
}
