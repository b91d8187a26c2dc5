import { useState } from 'preact/hooks';
import type { Webhook } from '../../../../src/client/webhooks';
import { Button } from '../../../components/button';
import { Dialog } from '../../../components/dialog';
import { ErrorMessage } from '../../../components/error-message';
import { api, customerPath } from '../../../lib/api';
import { dateTime } from '../../../lib/time';
import { useSubmit } from '../../../lib/use-submit';
import { DateTimeField, epochOf, localDateTime } from '../date-time-field';

const HOUR = 3_600_000;

/**
 * Sends the events again from a time (`POST .../replay`): the webhook's cursor moves back to the
 * first event created at or after it (docs/webhooks.md "Delivery"). An hour ago at first.
 */
export function ReplayDialog({ webhook, onReplayed, onClose }: { webhook: Webhook; onReplayed: (since: number) => void; onClose: () => void }) {
  const [since, setSince] = useState(() => localDateTime(Date.now() - HOUR));
  const { busy, error, submit } = useSubmit(async () => {
    const from = epochOf(since);
    if (from === undefined || Number.isNaN(from)) throw new Error('Give the date and time to send the events again from (Since).');
    if (from > Date.now()) throw new Error(`Since (${dateTime(from)}) is still to come: give a past date and time.`);
    await api.post(customerPath(`/webhooks/${encodeURIComponent(webhook.webhook_id)}/replay`), { since: from });
    onReplayed(from);
  });
  return (
    <Dialog title="Replay events" onClose={onClose}>
      <form class="form" onSubmit={submit} noValidate>
        <p>
          The events of the types the webhook takes, created from this time on, are sent again in order; the receiver tells repeats by the events' ids.
        </p>
        <DateTimeField label="Since" value={since} onValue={setSince} hint="In your time zone." />
        <ErrorMessage error={error} />
        <div class="actions">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" kind="primary" busy={busy}>
            Replay
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
