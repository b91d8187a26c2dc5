import { useState } from 'preact/hooks';
import type { RetentionRecord } from '../../../src/client/retention';
import { MAX_RETENTION_DAYS } from '../../../src/domain/retention';
import { Button } from '../../components/button';
import { ErrorMessage } from '../../components/error-message';
import { Field } from '../../components/field';
import { api, customerPath } from '../../lib/api';
import { useSubmit } from '../../lib/use-submit';

type Keep = 'forever' | 'days';

/**
 * Sets the retention period (`PUT /{c}/retention`, `events_days` a number of days or null for
 * ever). The API checks the number (whole, 1 to MAX_RETENTION_DAYS) and its details say what is wrong.
 */
export function RetentionForm({ record, onSaved }: { record: RetentionRecord; onSaved: (record: RetentionRecord) => void }) {
  const [keep, setKeep] = useState<Keep>(record.events_days === null ? 'forever' : 'days');
  const [days, setDays] = useState(record.events_days === null ? '' : String(record.events_days));
  const { busy, error, submit } = useSubmit(async () => {
    // An empty number field (nothing typed, or what the browser cannot read as a number) must not mean "for ever".
    if (keep === 'days' && days.trim() === '') throw new Error(`Enter how many days to keep events: a whole number from 1 to ${MAX_RETENTION_DAYS}.`);
    onSaved(await api.put<RetentionRecord>(customerPath('/retention'), { events_days: keep === 'forever' ? null : Number(days) }));
  });
  const choice = (value: Keep, label: string) => (
    <label class="choice">
      <input type="radio" name="keep" value={value} checked={keep === value} onChange={() => setKeep(value)} />
      {label}
    </label>
  );
  return (
    <form class="form narrow" onSubmit={submit} noValidate>
      <fieldset class="choice-group single">
        <legend>Keep events</legend>
        {choice('forever', 'For ever')}
        {choice('days', 'For a number of days')}
      </fieldset>
      {keep === 'days' && <Field label="Days" type="number" value={days} onValue={setDays} hint="Events older than this are deleted, starting within seconds." />}
      <ErrorMessage error={error} />
      <div class="actions">
        <Button type="submit" kind="primary" busy={busy}>
          Save
        </Button>
      </div>
    </form>
  );
}
