import { Button } from '../../../components/button';
import { CopyField } from '../../../components/copy-field';
import { Dialog } from '../../../components/dialog';
import type { WebhookWithSecret } from './new-webhook-dialog';

/**
 * A webhook's secret, shown this once (after creation or rotation): the API never shows it again
 * (docs/webhooks.md). The receiver checks each message's `webhook-signature` with it.
 */
export function SecretDialog({ webhook, rotated, onClose }: { webhook: WebhookWithSecret; rotated: boolean; onClose: () => void }) {
  return (
    <Dialog title={rotated ? 'New webhook secret' : 'Webhook secret'} onClose={onClose}>
      <div class="dialog-body">
        <p>
          <strong>Copy the secret now: it is shown only this once.</strong> The receiver at <span class="mono">{webhook.url}</span> verifies each
          message's signature with it (any Standard Webhooks library does).
        </p>
        {rotated && <p>The previous secret signs the messages too for the next 24 hours: give the receiver this one before then.</p>}
      </div>
      <CopyField label="Secret" value={webhook.secret} />
      <div class="actions">
        <Button kind="primary" autofocus onClick={onClose}>
          Done
        </Button>
      </div>
    </Dialog>
  );
}
