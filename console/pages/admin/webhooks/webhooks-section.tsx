import { useState } from 'preact/hooks';
import type { Webhook } from '../../../../src/client/webhooks';
import { Button } from '../../../components/button';
import { ErrorMessage } from '../../../components/error-message';
import { StatusMessage } from '../../../components/status-message';
import { api, customerPath } from '../../../lib/api';
import { navigate, useRoute } from '../../../lib/router';
import { SectionHeading } from '../section-heading';
import { useAll } from '../use-all';
import { NewWebhookDialog, type WebhookWithSecret } from './new-webhook-dialog';
import { SecretDialog } from './secret-dialog';
import { WebhookDetail } from './webhook-detail';
import { WEBHOOKS_ROUTE } from './webhook-route';
import { WebhookTable } from './webhook-table';

type OpenDialog = { kind: 'new' } | { kind: 'secret'; webhook: WebhookWithSecret; rotated: boolean };

/**
 * The customer's webhooks (docs/webhooks.md): `#/admin/webhooks` lists them and makes one (its
 * secret shown once); `#/admin/webhooks?webhook=<id>` shows one with its actions and deliveries.
 */
export function WebhooksSection() {
  const route = useRoute();
  const webhooks = useAll<Webhook>('/webhooks');
  const [dialog, setDialog] = useState<OpenDialog>();
  const [status, setStatus] = useState<string>();
  const id = route.query.get('webhook');
  const shown = id === null ? undefined : webhooks.items?.find((w) => w.webhook_id === id);
  const onSecret = (webhook: WebhookWithSecret, rotated: boolean) => {
    setDialog({ kind: 'secret', webhook, rotated });
    setStatus(rotated ? 'Rotated the secret.' : `Created a webhook to ${webhook.url}.`);
    void webhooks.reload();
  };
  const onDeleted = async (webhook: Webhook) => {
    await api.delete(customerPath(`/webhooks/${encodeURIComponent(webhook.webhook_id)}`));
    await webhooks.reload();
    setStatus(`Deleted the webhook to ${webhook.url}.`);
    navigate(WEBHOOKS_ROUTE);
  };
  return (
    <>
      <SectionHeading title="Webhooks">
        {id === null && (
          <Button kind="primary" onClick={() => setDialog({ kind: 'new' })}>
            New webhook
          </Button>
        )}
      </SectionHeading>
      {id === null && <p>Webhooks POST signed messages to URLs of yours: scans, telemetry, alerts as they open and resolve.</p>}
      <StatusMessage text={status} />
      <ErrorMessage error={webhooks.error} />
      {webhooks.items === undefined && !webhooks.error ? (
        <p class="loading">Loading webhooks…</p>
      ) : id === null ? (
        <WebhookTable webhooks={webhooks.items ?? []} />
      ) : shown ? (
        <WebhookDetail
          key={shown.webhook_id}
          webhook={shown}
          onChanged={webhooks.reload}
          onStatus={setStatus}
          onRotated={(rotated) => onSecret(rotated, true)}
          onDeleted={onDeleted}
        />
      ) : (
        <p>
          There is no webhook {id} (deleted meanwhile?): see <a href={WEBHOOKS_ROUTE}>all webhooks</a>.
        </p>
      )}
      {dialog?.kind === 'new' && (
        <NewWebhookDialog
          onClose={() => setDialog(undefined)}
          onCreated={(webhook) => onSecret(webhook, false)}
        />
      )}
      {dialog?.kind === 'secret' && <SecretDialog webhook={dialog.webhook} rotated={dialog.rotated} onClose={() => setDialog(undefined)} />}
    </>
  );
}
