import { useState } from 'preact/hooks';
import type { Webhook } from '../../../../src/client/webhooks';
import { WEBHOOK_EVENT_TYPES } from '../../../../src/domain/webhook-event-types';
import { Button } from '../../../components/button';
import { CheckboxGroup } from '../../../components/checkbox-group';
import { Dialog } from '../../../components/dialog';
import { ErrorMessage } from '../../../components/error-message';
import { Field } from '../../../components/field';
import { api, customerPath } from '../../../lib/api';
import { useSubmit } from '../../../lib/use-submit';

/** A webhook just made or its secret just rotated: the only answers that hold the secret. */
export type WebhookWithSecret = Webhook & { secret: string };

/**
 * Makes a webhook (`POST /{c}/webhooks`): its URL, the types it takes (every type the API knows,
 * none chosen at first: a receiver should get what it handles) and a description. The API checks
 * the URL (scheme, credentials, addresses: docs/webhooks.md "URLs") and names what it refuses.
 */
export function NewWebhookDialog({ onCreated, onClose }: { onCreated: (webhook: WebhookWithSecret) => void; onClose: () => void }) {
  const [url, setUrl] = useState('');
  const [eventTypes, setEventTypes] = useState<string[]>([]);
  const [description, setDescription] = useState('');
  const { busy, error, submit } = useSubmit(async () => {
    onCreated(await api.post<WebhookWithSecret>(customerPath('/webhooks'), { url: url.trim(), event_types: eventTypes, description }));
  });
  return (
    <Dialog title="New webhook" onClose={onClose}>
      <form class="form" onSubmit={submit} noValidate>
        <Field
          label="URL"
          type="url"
          required
          autofocus
          spellcheck={false}
          value={url}
          onValue={setUrl}
          hint="Where the messages are POSTed: https:// (or http://) on a host the server can reach."
        />
        <CheckboxGroup legend="Events" options={WEBHOOK_EVENT_TYPES} selected={eventTypes} onChange={setEventTypes} />
        <Field label="Description" maxLength={500} value={description} onValue={setDescription} hint="What receives them (optional)." />
        <ErrorMessage error={error} />
        <div class="actions">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" kind="primary" busy={busy}>
            Create
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
