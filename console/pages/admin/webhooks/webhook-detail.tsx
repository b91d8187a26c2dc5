import { useState } from 'preact/hooks';
import type { Webhook, WebhookDelivery } from '../../../../src/client/webhooks';
import { Button } from '../../../components/button';
import { ConfirmDialog } from '../../../components/confirm-dialog';
import { ErrorMessage } from '../../../components/error-message';
import { api, customerPath } from '../../../lib/api';
import { dateTime } from '../../../lib/time';
import { DeliveriesTable } from './deliveries-table';
import { EventTypes } from './event-types';
import type { WebhookWithSecret } from './new-webhook-dialog';
import { ReplayDialog } from './replay-dialog';
import { useDeliveries } from './use-deliveries';
import { WEBHOOKS_ROUTE } from './webhook-route';
import { WebhookState } from './webhook-state';

type Action = 'test' | 'replay' | 'rotate' | 'enable' | 'delete';

interface Props {
  webhook: Webhook;
  /** The webhook changed (enabled, disabled): read the list again. */
  onChanged: () => Promise<void>;
  onStatus: (text: string) => void;
  /** A new secret, to show once. */
  onRotated: (webhook: WebhookWithSecret) => void;
  onDeleted: (webhook: Webhook) => Promise<void>;
}

/** One webhook: what it takes, its actions (test, replay, rotate the secret, enable or disable, delete) and its deliveries. */
export function WebhookDetail({ webhook, onChanged, onStatus, onRotated, onDeleted }: Props) {
  const deliveries = useDeliveries(webhook.webhook_id);
  const [dialog, setDialog] = useState<'replay' | 'rotate' | 'delete'>();
  const [busy, setBusy] = useState<Action>();
  const [error, setError] = useState<unknown>();
  const path = (rest = '') => customerPath(`/webhooks/${encodeURIComponent(webhook.webhook_id)}${rest}`);
  const run = async (action: Action, work: () => Promise<void>) => {
    setBusy(action);
    setError(undefined);
    try {
      await work();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(undefined);
    }
  };
  const sendTest = () =>
    run('test', async () => {
      await api.post<WebhookDelivery>(path('/test'));
      onStatus('Queued a test message (webhook.test): its delivery is listed below.');
      deliveries.follow(0);
    });
  const setEnabled = (enabled: boolean) =>
    run('enable', async () => {
      await api.patch(path(), { enabled });
      await onChanged();
      onStatus(enabled ? 'Enabled the webhook: it goes on from the first event not yet delivered.' : 'Disabled the webhook: nothing is sent to it until it is enabled again.');
    });
  return (
    <>
      <p>
        <a href={WEBHOOKS_ROUTE}>All webhooks</a>
      </p>
      <h3 class="mono webhook-title">{webhook.url}</h3>
      <dl class="details webhook-details">
        <dt>Events</dt>
        <dd>
          <EventTypes types={webhook.event_types} />
        </dd>
        <dt>State</dt>
        <dd>
          <WebhookState webhook={webhook} />
        </dd>
        <dt>Description</dt>
        <dd>{webhook.description || '—'}</dd>
        <dt>Created</dt>
        <dd>{dateTime(webhook.created)}</dd>
      </dl>
      <div class="page-actions webhook-actions">
        <Button busy={busy === 'test'} onClick={sendTest}>
          Send test
        </Button>
        <Button onClick={() => setDialog('replay')}>Replay</Button>
        <Button onClick={() => setDialog('rotate')}>Rotate secret</Button>
        <Button busy={busy === 'enable'} onClick={() => setEnabled(!webhook.enabled)}>
          {webhook.enabled ? 'Disable' : 'Enable'}
        </Button>
        <Button kind="danger" onClick={() => setDialog('delete')}>
          Delete
        </Button>
      </div>
      <ErrorMessage error={error} />
      <div class="section-heading deliveries-heading">
        <h4>Deliveries</h4>
        <Button busy={deliveries.loading} onClick={() => void deliveries.refresh()}>
          Refresh
        </Button>
      </div>
      <ErrorMessage error={deliveries.error} />
      {deliveries.items === undefined && !deliveries.error ? <p class="loading">Loading deliveries…</p> : <DeliveriesTable deliveries={deliveries.items ?? []} />}
      {dialog === 'replay' && (
        <ReplayDialog
          webhook={webhook}
          onClose={() => setDialog(undefined)}
          onReplayed={(since) => {
            setDialog(undefined);
            onStatus(`Replaying the events since ${dateTime(since)}: their deliveries are listed below as they are sent.`);
            deliveries.follow(FIRST_READ_MS);
          }}
        />
      )}
      {dialog === 'rotate' && (
        <ConfirmDialog
          title="Rotate the secret?"
          confirm="Rotate secret"
          onClose={() => setDialog(undefined)}
          onConfirm={async () => {
            const rotated = await api.post<WebhookWithSecret>(path('/rotate-secret'));
            setDialog(undefined);
            onRotated(rotated);
          }}
        >
          <p>
            A new secret signs the messages to <span class="mono">{webhook.url}</span> from now on; the current one signs them too for 24 hours, so the
            receiver can switch meanwhile.
          </p>
        </ConfirmDialog>
      )}
      {dialog === 'delete' && (
        <ConfirmDialog
          title="Delete the webhook?"
          confirm="Delete"
          onClose={() => setDialog(undefined)}
          onConfirm={async () => {
            // A read of the deliveries (following a test or replay) after the DELETE would ask for a webhook that is gone: 404.
            await deliveries.stop();
            await onDeleted(webhook);
          }}
        >
          <p>
            Nothing more is sent to <span class="mono">{webhook.url}</span> and its pending deliveries are dropped. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}

/** After a replay, the first read of the deliveries: a moment for the deliverer to make the first batch. */
const FIRST_READ_MS = 500;
